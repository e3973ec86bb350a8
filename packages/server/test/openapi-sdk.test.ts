import { randomUUID } from 'node:crypto';
import { requestSchemas, wireSchemas } from '@maitento/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// The SDK declares the wire's shapes (packages/sdk/src/wire/schemas.ts); the server serves them in
// /openapi.json through @fastify/swagger, which rewrites them for OpenAPI 3.0 (`$ref: 'Run#'` becomes
// `#/components/schemas/Run`, `anyOf [X, null]` becomes `nullable`). `shape` undoes those rewrites so the two
// can be compared field by field: names, types, enums, formats, required lists, descriptions.
type Schema = Record<string, unknown>;

function isNull(schema: Schema): boolean {
  return schema.type === 'null' || (Array.isArray(schema.enum) && schema.enum.length === 1 && schema.enum[0] === null);
}

function shape(schema: Schema): unknown {
  const { nullable, $id: _id, ...rest } = schema;
  if (nullable) {
    const { description, ...type } = rest;
    return { nullable: true, of: shape(type), ...(description ? { description } : {}) };
  }
  if (typeof rest.$ref === 'string') return { ref: rest.$ref.replace('#/components/schemas/', '').replace(/#$/, '') };
  if (Array.isArray(rest.anyOf)) {
    const options = (rest.anyOf as Schema[]).filter((option) => !isNull(option));
    const inner = options.length === 1 ? shape(options[0]) : { anyOf: options.map(shape) };
    const described = rest.description ? { description: rest.description } : {};
    return options.length < rest.anyOf.length ? { nullable: true, of: inner, ...described } : inner;
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest)) {
    if (key === 'properties') {
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, Schema>).map(([name, field]) => [name, shape(field)]),
      );
    } else if (key === 'items') out.items = shape(value as Schema);
    else if (key === 'required') out.required = [...(value as string[])].sort();
    else out[key] = value;
  }
  return out;
}

/** A declaration as plain JSON (TypeBox's own markers are not enumerable, so JSON drops them). */
function plain(schema: unknown): Schema {
  return JSON.parse(JSON.stringify(schema)) as Schema;
}

interface Parameter {
  in: string;
  name: string;
  required: boolean;
  schema: Schema;
  description?: string;
}

interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
}

/**
 * The object schema the path or query parameters `where` of `operation` were made from: @fastify/swagger turns
 * each property into one parameter (its schema, its name, whether it is required, its description moved out of
 * its schema onto the parameter), and drops
 * `additionalProperties`, which OpenAPI parameters cannot say.
 */
function parametersSchema(operation: Operation, where: 'path' | 'query'): Schema | undefined {
  const parameters = (operation.parameters ?? []).filter((parameter) => parameter.in === where);
  if (parameters.length === 0) return undefined;
  const required = parameters.filter((parameter) => parameter.required).map((parameter) => parameter.name);
  // A property's description is moved from its schema to the parameter: put back where it was declared.
  const declared = (parameter: Parameter) =>
    parameter.description === undefined
      ? parameter.schema
      : { ...parameter.schema, description: parameter.description };
  return {
    type: 'object',
    properties: Object.fromEntries(parameters.map((parameter) => [parameter.name, declared(parameter)])),
    ...(required.length > 0 ? { required } : {}),
  };
}

/**
 * `schema` as parameters can carry it: without `additionalProperties`, and fastify's wildcard parameter `*` (the
 * rest of a file's URL) under the name the document gives it, `path`.
 */
function asParameters(schema: unknown): Schema | undefined {
  if (schema === undefined) return undefined;
  const { additionalProperties: _dropped, ...rest } = plain(schema);
  const properties = rest.properties as Record<string, Schema> | undefined;
  if (properties?.['*']) {
    const { '*': wildcard, ...named } = properties;
    rest.properties = { ...named, path: wildcard };
    rest.required = (rest.required as string[]).map((name) => (name === '*' ? 'path' : name));
  }
  return rest;
}

let server: TestServer;
let components: Record<string, Schema>;
let operations: Map<string, Operation>;

beforeAll(async () => {
  server = await startTestServer();
  const doc = (await server.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  components = doc.components.schemas;
  operations = new Map();
  for (const methods of Object.values(doc.paths as Record<string, Record<string, Operation>>)) {
    for (const operation of Object.values(methods)) operations.set(operation.operationId, operation);
  }
});

afterAll(async () => {
  await server?.close();
});

describe('the OpenAPI document and @maitento/sdk', () => {
  it.each(wireSchemas.map((schema) => [schema.$id as string, schema]))(
    'publishes the SDK schema %s as it is declared',
    (id, schema) => {
      expect(components[id], id).toBeDefined();
      expect(shape(components[id])).toEqual(shape(JSON.parse(JSON.stringify(schema))));
    },
  );

  it('names no component schema the SDK does not declare', () => {
    expect(Object.keys(components).sort()).toEqual(wireSchemas.map((schema) => schema.$id as string).sort());
  });
});

describe('the requests of the OpenAPI document and @maitento/sdk', () => {
  it('declares every operation of the document in requestSchemas, and no other', () => {
    expect([...operations.keys()].sort()).toEqual(Object.keys(requestSchemas).sort());
  });

  it.each(Object.entries(requestSchemas))('publishes the request of %s as the SDK declares it', (id, declared) => {
    const operation = operations.get(id);
    expect(operation, id).toBeDefined();
    if (!operation) return;
    const sdk = declared as { params?: unknown; querystring?: unknown; body?: unknown };
    expect(parametersSchema(operation, 'path'), `${id} path parameters`).toEqual(asParameters(sdk.params));
    expect(parametersSchema(operation, 'query'), `${id} query`).toEqual(asParameters(sdk.querystring));
    const body = operation.requestBody?.content['application/json']?.schema;
    expect(body === undefined ? undefined : shape(body), `${id} body`).toEqual(
      sdk.body === undefined ? undefined : shape(plain(sdk.body)),
    );
  });

  it('sees a request schema that differs from the declaration', () => {
    // The comparison itself: a limit changed on one side only is a difference it reports.
    const operation = operations.get('listRuns') as Operation;
    const changed = plain(requestSchemas.listRuns.querystring) as { properties: Record<string, Schema> };
    changed.properties.limit = { ...changed.properties.limit, maximum: 500 };
    expect(parametersSchema(operation, 'query')).not.toEqual(asParameters(changed));
    const body = operations.get('startRun')?.requestBody?.content['application/json']?.schema as Schema;
    const loose = { ...plain(requestSchemas.startRun.body), additionalProperties: true };
    expect(shape(body)).not.toEqual(shape(loose));
  });
});

describe('optional request bodies', () => {
  it('are published as not required exactly for the operations that take a request without a body', async () => {
    const doc = (await server.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, { operationId: string; requestBody?: { required?: boolean } }>>;
    };
    const optional = Object.values(doc.paths)
      .flatMap((item) => Object.values(item))
      .filter((op) => op.requestBody !== undefined && op.requestBody.required !== true)
      .map((op) => op.operationId)
      .sort();
    expect(optional).toEqual(['approveApproval', 'approveRun', 'cancelRun', 'rotateSecretKey', 'startRun']);
    // One of them with no body at all gets past validation to the handler (an unknown run, not a body error);
    // a rejection with none is refused by the handler's own rule, and stays published as required.
    const headers = { authorization: `Bearer ${server.adminKey}` };
    const cancel = await server.app.inject({ method: 'POST', url: `/v1/runs/${randomUUID()}/cancel`, headers });
    expect([cancel.statusCode, cancel.json().code]).toEqual([404, 'api:runs:not-found']);
    const reject = await server.app.inject({ method: 'POST', url: `/v1/approvals/${randomUUID()}/reject`, headers });
    expect([reject.statusCode, reject.json().code]).toEqual([422, 'api:approvals:reason-required']);
  });
});
