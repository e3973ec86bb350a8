import { ROUTE_ACCESS } from '../plugins/auth.js';
import type { RouteRole } from '../server/context.js';
import { STATUS_CODES } from 'node:http';
import { egressErrors } from '@maitento/egress';
import { engineErrors } from '@maitento/engine';
import { type ErrorRegistry, type ErrorSpec, renderTemplate, sharedErrors } from '@maitento/errors';
import { gatewayErrors } from '@maitento/gateway';
import { fileErrors, storeErrors } from '@maitento/store';
import { serverErrors } from '../errors.js';
import { ERROR_PARAMS, SCHEMA_EXAMPLES } from './examples.js';
import type { OperationDoc } from './operation.js';

type Media = { schema?: { $ref?: string; type?: string; items?: { $ref?: string } }; example?: unknown };
type Response = { description?: string; headers?: unknown; content?: Record<string, Media> };
type Operation = {
  operationId?: string;
  description?: string;
  summary?: string;
  security?: unknown[];
  parameters?: unknown[];
  requestBody?: { required?: boolean; description?: string; content?: Record<string, Media> };
  responses?: Record<string, Response>;
};

const REGISTRIES: ErrorRegistry<Record<string, ErrorSpec>>[] = [
  serverErrors,
  engineErrors,
  storeErrors,
  fileErrors,
  gatewayErrors,
  egressErrors,
  sharedErrors,
];

/** The registry entry of an error code the API answers. */
export function errorSpec(code: string): ErrorSpec {
  for (const registry of REGISTRIES) if (registry.has(code)) return registry.specs[code];
  throw new Error(`the OpenAPI document names ${code}, which no error registry defines`);
}

const ERROR_REF = '#/components/schemas/Error';
const WRITE_METHODS = new Set(['post', 'put', 'patch', 'delete']);

/**
 * The codes an operation can answer besides its own (OperationDoc.errors, declared at its route), from what it is: a `/v1` operation
 * needs a key (401) and a database (503); one with a role above `user` refuses other keys (403); one with
 * parameters or a body refuses what does not match its schema (400); one with a body refuses a body too large
 * (413) or, for JSON, not JSON (415); a write takes an Idempotency-Key (409, 422); any can fail inside (500).
 */
function commonCodes(
  path: string,
  method: string,
  op: Operation,
  doc: OperationDoc,
  role: string | undefined,
): string[] {
  const codes: string[] = [];
  const v1 = path.startsWith('/v1/');
  if (v1 && !keyless(op)) codes.push('api:auth:missing-key', 'api:auth:invalid-key');
  if (role === 'answer') codes.push('api:approvals:role-forbidden');
  else if (role !== undefined && role !== 'read') codes.push('api:auth:forbidden');
  if ((op.parameters?.length ?? 0) > 0 || op.requestBody) codes.push('api:request:invalid');
  if (op.requestBody) {
    codes.push('api:request:too-large');
    if (!doc.rawBody) codes.push('api:request:unsupported-media-type');
  }
  if (v1 && WRITE_METHODS.has(method)) codes.push('api:request:in-progress', 'api:request:idempotency-key-reused');
  codes.push('api:server:internal');
  if (v1) codes.push('api:store:unavailable');
  return codes;
}

/** True for a `/v1` operation that declares no security (the connect callback): it needs no key, so no role. */
function keyless(op: Operation): boolean {
  const security = (op as { security?: unknown }).security;
  return Array.isArray(security) && security.length === 0;
}

/** The example error of a code: its message with sample parameters. */
function errorExample(code: string, spec: ErrorSpec): Record<string, unknown> {
  const value: Record<string, unknown> = { error: renderTemplate(spec.message, ERROR_PARAMS), code };
  if (code === 'api:deploy:invalid') {
    value.diagnostics = [
      {
        code: 'api:secrets:not-found',
        severity: 'error',
        message: 'No secret orders-key in this namespace',
        file: 'external-operations/open-api/get-order.mtr',
        line: 3,
        column: 40,
        endLine: 3,
        endColumn: 58,
        hint: 'create it with mt secret-create, then deploy again',
      },
    ];
  }
  return value;
}

/** The error responses of the codes, one per status, each with the codes it carries and an example of each. */
function errorResponses(codes: readonly string[]): Record<string, Response> {
  const byStatus = new Map<number, string[]>();
  for (const code of new Set(codes)) {
    const { status } = errorSpec(code);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, Response> = {};
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const list = byStatus.get(status) ?? [];
    const lines = list.map((code) => `\`${code}\`: ${errorSpec(code).message}`);
    responses[String(status)] = {
      description: `${STATUS_CODES[status] ?? 'Error'}: an Error whose code is one of ${list.length === 1 ? 'this' : 'these'}:\n\n- ${lines.join('\n- ')}`,
      content: {
        'application/json': {
          schema: { $ref: ERROR_REF },
          examples: Object.fromEntries(
            list.map((code) => [
              code.replaceAll(':', '-'),
              { summary: code, value: errorExample(code, errorSpec(code)) },
            ]),
          ),
        } as Media,
      },
    };
  }
  return responses;
}

/** The example of a schema: the named schema's own, or a list of one for an array of them. */
function schemaExample(schema: Media['schema']): unknown {
  const name = (ref: string | undefined) => ref?.split('/').at(-1)?.replace(/#$/, '');
  if (schema?.$ref) return SCHEMA_EXAMPLES[name(schema.$ref) ?? ''];
  if (schema?.type === 'array' && schema.items?.$ref) {
    const item = SCHEMA_EXAMPLES[name(schema.items.$ref) ?? ''];
    return item === undefined ? undefined : [item];
  }
  return undefined;
}

/**
 * Completes every operation of an OpenAPI document from what its route declares (openapi/operation.ts): a
 * meaningful description and an example of each success answer, an example of each request body, and, instead of
 * `4XX` and `5XX`, each error status it can answer with the codes it carries. `docs` and `roles` are the routes'
 * facts and `config.role` by operationId. An operation without its facts, its description or an example throws:
 * the document is then not served, and the tests say why.
 */
export function documentOperations(
  document: unknown,
  docs: ReadonlyMap<string, OperationDoc>,
  roles: ReadonlyMap<string, string>,
): void {
  const paths = (document as { paths?: Record<string, Record<string, Operation>> }).paths ?? {};
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      const id = op.operationId ?? '';
      const doc = docs.get(id);
      if (!doc || !op.description)
        throw new Error(`no description of operation ${id} (${method.toUpperCase()} ${path})`);
      const examples = doc.examples ?? {};
      if (doc.rawBody) {
        const { types, description } = doc.rawBody;
        op.requestBody = {
          required: true,
          ...(description === undefined ? {} : { description }),
          content: Object.fromEntries(types.map((type) => [type, { schema: { type: 'string', format: 'binary' } }])),
        };
      }
      if (doc.parameters) op.parameters = [...(op.parameters ?? []), ...doc.parameters];
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
        media.example = examples.bodies?.[type] ?? examples.body;
        if (media.example === undefined) throw new Error(`no example of the ${type} body of ${id}`);
      }
      const responses = op.responses ?? {};
      for (const [status, response] of Object.entries(responses)) {
        const own = examples.statuses?.[status];
        if (own) {
          // A status the route declares with a body of its own (the health check's 503).
          response.description = own.description;
          for (const media of Object.values(response.content ?? {})) media.example = own.example;
          continue;
        }
        if (!status.startsWith('2')) continue;
        // A body that is not JSON keeps the description its route gives it (the stream's framing).
        const described = response.description && response.description !== 'Default Response';
        if (!(described && response.content && !response.content['application/json']))
          response.description = status === '201' && responses['200'] && doc.created ? doc.created : doc.ok;
        for (const [type, media] of Object.entries(response.content ?? {})) {
          media.example = examples.oks?.[type] ?? examples.ok ?? schemaExample(media.schema);
          if (media.example === undefined) throw new Error(`no example of the ${status} ${type} answer of ${id}`);
        }
      }
      delete responses['4XX'];
      delete responses['5XX'];
      // The key roles that may call it (docs/roles.md): one table, plugins/auth.ts's ROUTE_ACCESS.
      if (path.startsWith('/v1/') && !keyless(op)) {
        const level = (roles.get(id) ?? 'read') as RouteRole;
        (op as Record<string, unknown>)['x-roles'] = [...ROUTE_ACCESS[level]];
        // An operator route: an admin key of the `default` namespace only.
        if (level === 'operator') (op as Record<string, unknown>)['x-roles-namespace'] = 'default';
      }
      const errors = errorResponses([...commonCodes(path, method, op, doc, roles.get(id)), ...doc.errors]);
      for (const [status, response] of Object.entries(errors)) {
        // An answer the route declares itself (the health check's 503) stays as it is.
        if (!responses[status]) responses[status] = response;
      }
      op.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
    }
  }
}
