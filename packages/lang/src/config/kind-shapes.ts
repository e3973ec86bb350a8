import {
  limitWindowMs,
  SCHEDULE_MISSED,
  SCHEDULE_OVERLAPS,
  TOKEN_AUTH_METHODS,
  TRIGGER_RUN_STATUSES,
  TRIGGER_VERIFY_STYLES,
} from '@maitento/sdk/wire';
import type { ResourceKind } from './resources.js';
import type { Property, Shape } from './shape.js';

/** Longest connector description allowed. */
export const MAX_DESCRIPTION = 500;

/** How run inputs and parameters may be named: letters, digits, `_` and `-`, not starting with a digit. */
export const INPUT_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

const str: Shape = { type: 'string' };
const bool: Shape = { type: 'boolean' };
const json: Shape = { type: 'json' };
// `doc` is what editors show for the property (completion, hover); the shape itself says its type and values.
const req = (shape: Shape, doc?: string): Property =>
  doc ? { shape, required: true, doc } : { shape, required: true };
const opt = (shape: Shape, doc?: string): Property => (doc ? { shape, doc } : { shape });

const nonEmpty: Shape = { type: 'string', check: (v) => (v.trim() === '' ? 'must not be empty' : undefined) };

const inputName: Shape = {
  type: 'string',
  check: (v) =>
    INPUT_NAME.test(v)
      ? undefined
      : `is ${JSON.stringify(v)}; a name is letters, digits, _ and -, not starting with a digit`,
};

const parameter: Shape = {
  type: 'object',
  name: 'a parameter',
  properties: {
    name: req(inputName),
    description: opt(str),
    required: opt(bool),
    type: opt({ type: 'string', values: ['string', 'number', 'integer', 'boolean'] }),
  },
};

const scope: Shape = {
  type: 'string',
  // RFC 6749 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
  check: (v) =>
    /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(v)
      ? undefined
      : `is ${JSON.stringify(v)}; a scope is one word of printable ASCII without spaces, quotes or backslashes`,
};

const limitCounts = {
  calls: opt({ type: 'number' }, 'Calls admitted in any window of `per`, across every server and worker.'),
  per: opt(
    {
      type: 'string',
      check: (v) =>
        limitWindowMs(v) === undefined
          ? `is ${JSON.stringify(v)}; a window is a whole number of seconds, minutes or hours from 1s to 24h, such as "5s", "1m" or "1h"`
          : undefined,
    },
    'The window of `calls`: "5s", "1m", "1h" (1 s to 24 h).',
  ),
  inFlight: opt({ type: 'number' }, 'Calls in flight at once, across every server and worker.'),
};

/** A limit counted apart for each API key or each end user (docs/limits.md, "Per key and per end user"). */
const scopedLimitShape = (who: string): Shape => ({
  type: 'object',
  name: `a limit per ${who}`,
  properties: limitCounts,
});

/** A rate limit and concurrency cap (docs/limits.md), of a tool or of a connector's origin. */
const limitShape: Shape = {
  type: 'object',
  name: 'a limit',
  properties: {
    ...limitCounts,
    perKey: opt(
      scopedLimitShape('key'),
      'The same counts for each API key apart (the REST or MCP caller\'s key, or the key that started the run): `perKey = { calls = 5 per = "1m" }`.',
    ),
    perEndUser: opt(
      scopedLimitShape('end user'),
      'The same counts for each end user apart (where a run or an MCP call names one).',
    ),
    onLimit: opt(
      { type: 'string', values: ['wait', 'fail'] },
      'Inside a run: "wait" (default) until the window opens, or "fail" the tool call with a message the model reads.',
    ),
  },
};

/** A limit on starting runs of an interaction, for each key or end user apart (docs/limits.md): calls per window. */
const startLimitShape = (who: string): Shape => ({
  type: 'object',
  name: `a limit on starts per ${who}`,
  properties: {
    calls: opt({ type: 'number' }, 'Starts admitted in any window of `per`, across every server.'),
    per: limitCounts.per,
  },
});

/** A limit on starting runs of an interaction (docs/limits.md, "A key's limit on starting runs"). */
const interactionLimitShape: Shape = {
  type: 'object',
  name: 'a limit on starts',
  properties: {
    perKey: opt(
      startLimitShape('key'),
      'Starts admitted for each API key apart (the key that starts the run): `perKey = { calls = 10 per = "1m" }`.',
    ),
    perEndUser: opt(
      startLimitShape('end user'),
      'Starts admitted for each end user apart (a start naming one): `perEndUser = { calls = 2 per = "1m" }`.',
    ),
  },
};

const connector: Shape = {
  type: 'object',
  name: 'a connector',
  properties: {
    method: req({ type: 'string', values: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] }, 'The HTTP method of the call.'),
    url: req(nonEmpty, 'The full http(s):// URL; `{name}` marks a path parameter (in the path only).'),
    description: req({ type: 'string', maxLength: MAX_DESCRIPTION }, 'What the endpoint does, 500 characters at most.'),
    parameters: opt(
      {
        type: 'object',
        name: 'parameters',
        properties: {
          path: opt(
            { type: 'array', items: parameter },
            'The path parameters, each `{name}` of the url; required by default.',
          ),
          query: opt({ type: 'array', items: parameter }, 'The query parameters; optional by default.'),
          header: opt(
            { type: 'array', items: parameter },
            'The header parameters the model fills (never the credential); optional by default.',
          ),
        },
      },
      'The path, query and header parameters of the call.',
    ),
    schema: opt(
      {
        type: 'object',
        name: 'schema',
        properties: {
          request: opt({ type: 'schema' }, 'JSON Schema of the request body; without it no body is sent.'),
          response: opt({ type: 'schema' }, 'JSON Schema the response must match.'),
        },
      },
      'JSON Schemas of the request body and of the response.',
    ),
    auth: opt(
      { type: 'string', values: ['None', 'Header', 'Maitento', 'OAuth2'] },
      '"None" (default), "Header" (a tool or run gives the secret), "Maitento" (the platform\'s own API) or "OAuth2" (the run\'s end user\'s connection at `provider`).',
    ),
    provider: opt(
      { type: 'ref', kind: 'auth-provider' },
      'With auth = "OAuth2": the auth provider whose connection of the run\'s end user is used, `@ref("<auth provider>")`.',
    ),
    scopes: opt(
      { type: 'array', items: scope },
      'With auth = "OAuth2": the scopes this connector needs, besides the provider\'s own.',
    ),
    grant: opt(
      { type: 'string', values: ['authorization_code', 'client_credentials'] },
      'With auth = "OAuth2": "authorization_code" (default: the run\'s end user\'s connection) or "client_credentials" (the provider\'s own token for this client, no end user).',
    ),
    limit: opt(
      limitShape,
      'A limit on the calls to this connector\'s origin (scheme, host and port), by every tool whose connector has that origin and a limit: `limit = { calls = 100 per = "1m" inFlight = 4 }` (docs/limits.md).',
    ),
  },
};

/**
 * How a remote MCP tool may be named: 1 to 128 ASCII letters, digits, `_`, `-`, `.` and `/`. The MCP
 * specification (2025-11-25, "Tool names") recommends the same without `/`; its first version (SEP-986)
 * allowed `/`, so names such as `user-profile/update` are accepted too.
 */
export const MCP_TOOL_NAME = /^[A-Za-z0-9_./-]{1,128}$/;

const mcpToolName: Shape = {
  type: 'string',
  check: (v) =>
    MCP_TOOL_NAME.test(v)
      ? undefined
      : v === ''
        ? 'must not be empty; it is the name the MCP server lists the tool under'
        : v.length > 128
          ? `is ${v.length} characters long; an MCP tool name is 1 to 128 characters`
          : `is ${JSON.stringify(v)}; an MCP tool name is letters, digits, _, -, . and /, such as "search_issues"`,
};

/** A connector to one tool of a remote MCP server (`connectors/mcp/<name>.mtr`). */
const mcpConnector: Shape = {
  type: 'object',
  name: 'an MCP connector',
  properties: {
    url: req(nonEmpty, 'The URL of the remote MCP server (Streamable HTTP).'),
    tool: req(mcpToolName, 'The name the MCP server lists the tool under.'),
    description: opt(
      { type: 'string', maxLength: MAX_DESCRIPTION },
      "What the tool does; the remote tool's description when absent.",
    ),
    auth: opt(
      {
        type: 'string',
        values: ['None', 'Header', 'OAuth2'],
        refused: {
          Maitento: {
            detail:
              'is "Maitento", which is only for the platform\'s own API; an MCP connector\'s auth is "None", "Header" or "OAuth2"',
            instead:
              'use auth = "Header" and give the secret in the tool\'s auth (or a run input), "OAuth2", or "None"',
          },
        },
      },
      '"None" (default), "Header" (a tool or run gives the secret) or "OAuth2" (the run\'s end user\'s connection at `provider`, sent as a Bearer token to the server\'s origin only).',
    ),
    provider: opt(
      { type: 'ref', kind: 'auth-provider' },
      'With auth = "OAuth2": the auth provider (the MCP server\'s authorization server) whose connection of the run\'s end user is used, `@ref("<auth provider>")`.',
    ),
    scopes: opt(
      { type: 'array', items: scope },
      'With auth = "OAuth2": the scopes this connector needs, besides the provider\'s own.',
    ),
    grant: opt(
      { type: 'string', values: ['authorization_code', 'client_credentials'] },
      'With auth = "OAuth2": "authorization_code" (default: the run\'s end user\'s connection) or "client_credentials" (the provider\'s own token for this client, no end user).',
    ),
    limit: opt(
      limitShape,
      "A limit on the calls to this MCP server's origin, by every connector with that origin and a limit (docs/limits.md).",
    ),
  },
  refused: {
    method: 'an MCP connector is always called with the MCP tools/call request; remove method',
    parameters: 'an MCP tool takes only its arguments (a JSON object), no path or query parameters; remove parameters',
    schema:
      "the input schema comes from the remote MCP server: a deploy reads it from the server's tools/list; remove schema",
  },
};

const tool: Shape = {
  type: 'object',
  name: 'a tool',
  properties: {
    connector: req({ type: 'ref', kind: 'connector' }, 'The connector the tool calls.'),
    guidance: req(nonEmpty, 'When and how to use the tool: the description the model reads.'),
    bindings: opt(
      {
        type: 'object',
        name: 'bindings',
        properties: {
          request: opt({ type: 'map', values: json }, 'Fixed body values (`bindings.request:address/city`).'),
          query: opt({ type: 'map', values: json }, 'Fixed query parameters.'),
          path: opt({ type: 'map', values: json }, 'Fixed path parameters.'),
        },
      },
      'Fixed values Maitento adds to every call; the model never sees them.',
    ),
    auth: opt(
      {
        type: 'object',
        name: "a tool's auth",
        properties: {
          header: req(nonEmpty, 'The header the secret is sent in.'),
          secret: req({ type: 'ref', kind: 'secret' }, 'The secret whose value is sent.'),
        },
      },
      'The secret sent in a header, for a connector with auth = "Header".',
    ),
    requiresApproval: opt(bool, 'true: a person approves each call first (default false).'),
    approval: opt(
      {
        type: 'object',
        name: "a tool's approval policy",
        properties: {
          approvers: opt(
            { type: 'array', items: nonEmpty },
            'Who may answer: key roles ("approver", "user", "admin"), API key ids and/or people signed in through single sign-on ("person:<id>") (default: every role that answers).',
          ),
          count: opt(
            { type: 'number' },
            'How many distinct keys must approve a call (default 1; 2: a two-person rule).',
          ),
          excludeStarter: opt(bool, "true: the key that started the run's tree may not answer (separation of duties)."),
        },
      },
      'Who may approve its calls, how many, and whether the starter may (with requiresApproval = true; docs/roles.md).',
    ),
    limit: opt(
      limitShape,
      'A rate limit and concurrency cap: `limit = { calls = 10 per = "1m" inFlight = 2 onLimit = "wait" }` (docs/limits.md).',
    ),
  },
};

const agent: Shape = {
  type: 'object',
  name: 'an agent',
  properties: {
    // Which providers exist is checked once the agent is built (agent-checks.ts), with its own codes.
    model: req(
      str,
      '`provider:name`, such as "openai:gpt-4o-mini"; providers: openai, anthropic, openai-compatible, scripted.',
    ),
    instructions: req(str, 'The system prompt.'),
    summary: opt(str, 'What other agents read about this agent; required when another agent hands it tasks.'),
    functions: opt(
      {
        type: 'array',
        // A tool (`ref`) or another agent (`agent`): exactly one of them, checked in agent-checks.ts.
        items: {
          type: 'object',
          name: 'a function',
          exclusive: [['ref', 'agent']],
          properties: {
            ref: opt({ type: 'ref', kind: 'tool' }, 'A tool the agent may call.'),
            agent: opt({ type: 'ref', kind: 'agent' }, 'An agent this agent may hand a task to (agents as tools).'),
          },
        },
      },
      'The tools and agents the agent may call, each once: `[ { ref = @ref("<tool>") }, { agent = @ref("<agent>") } ]`.',
    ),
  },
};

const prompt: Shape = {
  type: 'object',
  name: 'a prompt input',
  properties: { name: req(inputName), description: opt(str), required: opt(bool), default: opt(str) },
};

const binding: Shape = {
  type: 'object',
  name: 'a run-input binding',
  properties: {
    function: req({ type: 'ref', kind: 'tool' }),
    agent: opt({ type: 'ref', kind: 'agent' }),
    name: req(inputName),
    target: req(nonEmpty),
    type: opt({ type: 'string', values: ['request', 'query', 'path'] }),
    required: opt(bool),
    default: opt(json),
    description: opt(str),
  },
};

const authInput: Shape = {
  type: 'object',
  name: 'a run-input auth',
  properties: {
    name: req(inputName),
    function: req({ type: 'ref', kind: 'tool' }),
    agent: opt({ type: 'ref', kind: 'agent' }),
    header: opt(nonEmpty),
    required: opt(bool),
    secret: opt({ type: 'ref', kind: 'secret' }),
    description: opt(str),
  },
};

const interaction: Shape = {
  type: 'object',
  name: 'an interaction',
  properties: {
    agent: req(
      {
        type: 'object',
        name: "the interaction's agent",
        properties: {
          name: req(nonEmpty, 'How runs and approvals name the agent.'),
          agent: req({ type: 'ref', kind: 'agent' }, 'The agent.'),
        },
      },
      'The agent that runs the task: `{ name = "Support" agent = @ref("<agent>") }`.',
    ),
    task: req(nonEmpty, 'The task, with `%%input%%` placeholders.'),
    inputs: opt(
      {
        type: 'object',
        name: 'inputs',
        properties: {
          prompts: opt(
            { type: 'array', items: prompt },
            'Text run inputs: `[ { name description required default } ]`.',
          ),
          functions: opt(
            {
              type: 'object',
              name: 'inputs.functions',
              properties: {
                binding: opt({ type: 'array', items: binding }, 'Run inputs written straight into a tool call.'),
                auth: opt({ type: 'array', items: authInput }, "Run inputs that carry a secret's id."),
              },
            },
            'Run inputs for tool calls.',
          ),
        },
      },
      'The run inputs of the interaction.',
    ),
    functions: opt(
      {
        type: 'object',
        name: 'functions',
        properties: {
          openApi: opt(
            {
              type: 'array',
              items: {
                type: 'object',
                name: 'a functions.openApi entry',
                properties: { name: opt(str), ref: req({ type: 'ref', kind: 'tool' }, 'The tool.') },
              },
            },
            'Tools handed to every agent: `[ { name ref = @ref("<tool>") } ]`.',
          ),
        },
      },
      'The tools the interaction gives its agents.',
    ),
    result: opt(
      {
        type: 'object',
        name: 'result',
        properties: {
          schema: req({ type: 'schema' }, 'The JSON Schema of the answer: an object, inline or `@json(...)`.'),
        },
      },
      'The shape of the final answer: `{ schema = @json("<file>.schema.json") }` (docs/runs.md).',
    ),
    budget: opt(
      {
        type: 'object',
        name: 'budget',
        properties: {
          tokens: opt({ type: 'number' }, 'The most input + output tokens a run may spend (a whole number).'),
          costUsd: opt(
            { type: 'number' },
            'The most a run may spend in US dollars, by the price table (MT_MODEL_PRICES).',
          ),
          onExceeded: opt(
            { type: 'string', values: ['wait', 'fail'] },
            '"wait" (default): the run waits for a person to extend the budget; "fail": it fails with api:runs:budget-exceeded.',
          ),
        },
      },
      'What each run may spend: `{ tokens = 100000 costUsd = 0.5 onExceeded = "wait" }` (docs/runs.md).',
    ),
    limit: opt(
      interactionLimitShape,
      'A limit on starting runs, for each key and end user apart: `limit = { perKey = { calls = 10 per = "1m" } }` (docs/limits.md); schedules and triggers are not counted.',
    ),
  },
};

/** How long a conversation may wait for a message by default: 24 hours. */
export const DEFAULT_MAX_IDLE_SECONDS = 24 * 60 * 60;

const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** Seconds of a duration such as `"90s"`, `"30m"`, `"24h"` or `"7d"` (1 s to 30 days), or undefined. */
export function parseDuration(text: string): number | undefined {
  const match = /^([1-9][0-9]{0,6})(s|m|h|d)$/.exec(text);
  if (!match) return undefined;
  const seconds = Number(match[1]) * (DURATION_UNITS[match[2]!] ?? 0);
  return seconds <= 30 * 86_400 ? seconds : undefined;
}

/** A conversation interaction (`interactions/conversation/<name>.mtr`): a one-shot's properties and `maxIdle`. */
const conversation: Shape = {
  ...interaction,
  name: 'a conversation interaction',
  properties: {
    ...(interaction as Extract<Shape, { type: 'object' }>).properties,
    maxIdle: opt(
      {
        type: 'string',
        check: (v) =>
          parseDuration(v) === undefined
            ? `is ${JSON.stringify(v)}; a duration is a whole number and s, m, h or d, such as "30m" or "24h", at most 30 days`
            : undefined,
      },
      'How long the conversation waits for a message before it ends, such as "30m" (default "24h", at most "30d").',
    ),
  },
} as Shape;

/** An OAuth 2 authorization server end users connect their accounts at (`auth-providers/<name>.mtr`). */
const authProvider: Shape = {
  type: 'object',
  name: 'an auth provider',
  // An issuer or explicit endpoints, not both: checked in auth-provider-checks.ts.
  exclusive: [
    ['issuer', 'authorizationUrl'],
    ['issuer', 'tokenUrl'],
    ['resource', 'issuer'],
    ['resource', 'authorizationUrl'],
    ['resource', 'tokenUrl'],
  ],
  properties: {
    issuer: opt(
      nonEmpty,
      'The issuer (an https:// URL): its endpoints are read from its metadata (/.well-known/oauth-authorization-server or openid-configuration). Or give authorizationUrl and tokenUrl.',
    ),
    authorizationUrl: opt(nonEmpty, 'The authorization endpoint, for a provider without metadata (with tokenUrl).'),
    tokenUrl: opt(nonEmpty, 'The token endpoint, for a provider without metadata (with authorizationUrl).'),
    resource: opt(
      nonEmpty,
      "A protected resource, such as a remote MCP server's URL: the issuer is the first authorization server named by its protected-resource metadata (RFC 9728, /.well-known/oauth-protected-resource). Instead of issuer.",
    ),
    clientId: opt(
      nonEmpty,
      'The client id registered at the provider. Leave it out with an issuer or a resource that offers dynamic client registration (RFC 7591): the client is then registered on first use.',
    ),
    clientSecret: opt(
      { type: 'ref', kind: 'secret' },
      'The secret holding the client secret: `@ref("<secret>")` (not with tokenAuthMethod = "none").',
    ),
    tokenAuthMethod: opt(
      { type: 'string', values: TOKEN_AUTH_METHODS },
      'How the client authenticates at the token endpoint: "client_secret_basic" (default), "client_secret_post" or "none" (a public client).',
    ),
    scopes: opt({ type: 'array', items: scope }, 'The scopes every connection asks for; connectors may add their own.'),
    authorizationParams: opt(
      { type: 'map', values: str },
      'Extra parameters of the authorization request, such as `{ access_type = "offline" }`.',
    ),
    refresh: opt(bool, 'true (default): refresh access tokens with the refresh token; false: ask the person again.'),
  },
  refused: {
    pkce: 'PKCE (S256) is always used for the authorization code flow; remove pkce',
    redirectUri:
      "the redirect URI is the server's own callback (MT_PUBLIC_URL + /v1/connections/callback); remove redirectUri",
  },
};

/**
 * A schedule (`schedules/<name>.mtr`): the cron expression and time zone are checked once built (schedule-checks.ts),
 * the inputs against the interaction's.
 */
const schedule: Shape = {
  type: 'object',
  name: 'a schedule',
  properties: {
    interaction: req(
      { type: 'ref', kind: 'interaction' },
      'The interaction each tick starts a run of: `@ref("<interaction>")`.',
    ),
    inputs: opt(
      { type: 'map', values: json },
      "The run's inputs, as a start request gives them: prompt and binding values, an auth input's secret id.",
    ),
    cron: req(
      nonEmpty,
      'A cron expression: 5 fields (minute hour day month weekday), or 6 with seconds first, such as "0 8 * * MON-FRI".',
    ),
    timezone: opt(
      nonEmpty,
      'The IANA time zone the cron expression is read in, such as "Europe/Paris" (default "UTC").',
    ),
    overlap: opt(
      { type: 'string', values: SCHEDULE_OVERLAPS },
      'A tick while the last run has not ended: "skip" (default, recorded), "queue-one" (started when it ends) or "allow".',
    ),
    missed: opt(
      { type: 'string', values: SCHEDULE_MISSED },
      'Ticks no process was up for: "skip" (default, recorded as missed) or "run-once" (one run for them all).',
    ),
    enabled: opt(bool, 'false: the schedule starts nothing (default true).'),
  },
  refused: {
    interactive: 'a scheduled run has nobody to ask: it is always an app run (interactive false); remove interactive',
  },
};

/** The largest body a trigger may take: 1 MiB. */
export const MAX_TRIGGER_BODY = 1_048_576;
/** A trigger's body limit when it gives none: 256 KiB. */
export const DEFAULT_TRIGGER_BODY = 262_144;

const pointer: Shape = {
  type: 'string',
  check: (v) =>
    v === '' || v.startsWith('/')
      ? undefined
      : `is ${JSON.stringify(v)}; a JSON Pointer (RFC 6901) is "" (the whole payload) or starts with "/", such as "/data/order_id"`,
};

/**
 * A trigger (`triggers/<name>.mtr`): an inbound webhook (`verify`) or another interaction's run ending (`on`), exactly
 * one of them (schedule-checks.ts reports neither or both); its inputs are checked against the interaction's.
 */
const trigger: Shape = {
  type: 'object',
  name: 'a trigger',
  exclusive: [['verify', 'on']],
  properties: {
    interaction: req({ type: 'ref', kind: 'interaction' }, 'The interaction each delivery starts a run of.'),
    inputs: opt(
      {
        type: 'map',
        values: {
          type: 'object',
          name: "a trigger's input",
          properties: {
            pointer: req(
              pointer,
              'The JSON Pointer of the value in the payload, such as "/data/order_id" (a chaining trigger: in the ended run, such as "/result").',
            ),
            default: opt(json, 'The value when the payload has none there.'),
          },
        },
      },
      'Each run input from the payload: `{ orderId = { pointer = "/data/order_id" } }`.',
    ),
    verify: opt(
      {
        type: 'object',
        name: "a trigger's verification",
        properties: {
          style: req(
            { type: 'string', values: TRIGGER_VERIFY_STYLES },
            'How the sender signs: "standard-webhooks", "github" (X-Hub-Signature-256) or "stripe" (Stripe-Signature).',
          ),
          secret: req({ type: 'ref', kind: 'secret' }, 'The secret holding the shared signing secret.'),
          tolerance: opt(
            {
              type: 'string',
              check: (v) =>
                parseDuration(v) === undefined ? `is ${JSON.stringify(v)}; a duration such as "5m"` : undefined,
            },
            'How old a signed timestamp may be (Stripe; default "5m"). Standard Webhooks: 5 minutes.',
          ),
        },
      },
      'An inbound webhook, how each delivery is verified: `{ style = "stripe" secret = @ref("shop-webhook-secret") }`. Or `on`.',
    ),
    on: opt(
      {
        type: 'object',
        name: "a trigger's run to follow",
        properties: {
          runCompleted: req(
            { type: 'ref', kind: 'interaction' },
            'The interaction whose runs, when they end, each start a run: `@ref("refund-desk")`.',
          ),
          status: opt(
            { type: 'array', items: { type: 'string', values: TRIGGER_RUN_STATUSES } },
            'The ends that start one: `["Completed"]` (default), `["Failed"]` or both.',
          ),
        },
      },
      'A chaining trigger, the run whose end starts one: `{ runCompleted = @ref("refund-desk") }`. Or `verify`.',
    ),
    eventId: opt(pointer, "The JSON Pointer of the delivery's id in the payload, instead of the style's own."),
    maxBodyBytes: opt({ type: 'number' }, 'The largest body taken, in bytes (default 262144, at most 1048576).'),
    enabled: opt(bool, 'false: deliveries are refused (default true).'),
  },
};

/** The shape of each resource kind's file. */
export const KIND_SHAPES: Readonly<Record<ResourceKind, Shape>> = {
  'auth-provider': authProvider,
  connector,
  tool,
  agent,
  interaction,
  schedule,
  trigger,
};

/** The shape of a conversation interaction's file (`interactions/conversation/<name>.mtr`). */
export const CONVERSATION_SHAPE: Shape = conversation;

/** The shape of an MCP connector's file (`connectors/mcp/<name>.mtr`). */
export const MCP_CONNECTOR_SHAPE: Shape = mcpConnector;
