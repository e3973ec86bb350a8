import { IDEMPOTENCY_KEY_PATTERN, IDEMPOTENT_METHODS } from '../plugins/idempotency.js';

type Operation = {
  operationId?: string;
  parameters?: Record<string, unknown>[];
  responses?: Record<string, { headers?: Record<string, unknown>; content?: Record<string, Record<string, unknown>> }>;
};

/** The document's tags, one per group of routes (each route names its own in `schema.tags`). */
export const OPENAPI_TAGS = [
  { name: 'health', description: 'Whether the server and its database answer (no API key needed)' },
  { name: 'namespaces', description: 'Namespaces: separate sets of resources, keys and secrets' },
  { name: 'keys', description: "API keys of the key's namespace and their roles" },
  {
    name: 'deploy',
    description:
      'Deploy a config repo: auth providers, connectors, tools, agents, interactions and schedules as new versions',
  },
  { name: 'auth-providers', description: 'Auth providers: OAuth 2 authorization servers end users connect at' },
  { name: 'connectors', description: 'Connectors: the HTTP calls (or remote MCP tools) tools are made of' },
  { name: 'extops', description: 'Tools (external operations): list, read, enable, disable and call them' },
  { name: 'agents', description: 'Agents: a model, its instructions and its tools' },
  { name: 'interactions', description: 'Interactions: the tasks runs are started from' },
  { name: 'hooks', description: 'Inbound webhooks: deliveries that start runs (no API key), and their log' },
  {
    name: 'schedules',
    description: 'Schedules: runs started at the ticks of a cron expression; pause, resume, history',
  },
  { name: 'secrets', description: 'Secrets tools send as credentials (values never returned) and the master key' },
  { name: 'connections', description: "End users' OAuth 2 connections: connect links, the callback, list and delete" },
  { name: 'runs', description: 'Runs of interactions: start, read, follow their events, cancel, answer approvals' },
  { name: 'approvals', description: 'Calls waiting for a person: list, read, approve, reject' },
  { name: 'file-systems', description: 'File systems runs read and write through file tools' },
  { name: 'knowledge', description: 'Knowledge bases: documents, passages and search' },
  { name: 'audit', description: 'The audit log: who changed what, when (admin only), as pages or JSON Lines' },
  {
    name: 'webhooks',
    description: 'Outbound webhooks: endpoints, their events and signing secrets, test events and delivery logs',
  },
];

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe: a repeat with the same key, method, URL and body within 24 hours gets the recorded ' +
    'answer (with Idempotent-Replayed: true) and is not run again',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: IDEMPOTENCY_KEY_PATTERN.source },
};

const IDEMPOTENT_REPLAYED = {
  description: 'true when this answer is the recorded answer of an earlier request with the same Idempotency-Key',
  schema: { type: 'string', enum: ['true'] },
};

/** The header a run's event stream is resumed with (its route declares it: routes/runs.ts). */
export const LAST_EVENT_ID = {
  name: 'Last-Event-ID',
  in: 'header',
  required: false,
  description:
    'Resume after this event (the `id:` of the last event received, its seq); sent by EventSource on a ' +
    'reconnect, and wins over ?after=',
  schema: { type: 'string', pattern: '^\\s*[0-9]{1,15}\\s*$' },
};

/**
 * Declares in an OpenAPI document the headers the server reads and writes outside the routes' schemas: the
 * `Idempotency-Key` request header and `Idempotent-Replayed` response header of every `/v1` POST, PUT and DELETE
 * (what plugins/idempotency.ts handles). A header one route reads itself (`Last-Event-ID`) is declared at its route.
 */
export function declareHeaders(document: unknown): void {
  const paths = (document as { paths?: Record<string, Record<string, Operation>> }).paths ?? {};
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (path.startsWith('/v1/') && IDEMPOTENT_METHODS.has(method.toUpperCase())) {
        op.parameters = [...(op.parameters ?? []), IDEMPOTENCY_KEY];
        // Any answer under 500 is recorded, and so may be replayed.
        for (const [status, response] of Object.entries(op.responses ?? {})) {
          if (!status.startsWith('5'))
            response.headers = { ...response.headers, 'Idempotent-Replayed': IDEMPOTENT_REPLAYED };
        }
      }
    }
  }
}
