import { randomUUID } from 'node:crypto';
import { wireSchemas } from '@maitento/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// The SDK declares the wire's shapes (packages/sdk/src/wire/schemas.ts); the server serves them in
// /openapi.json through @fastify/swagger, which rewrites them for OpenAPI 3.0 (`$ref: 'Run#'` becomes
// `#/components/schemas/Run`, `anyOf [X, null]` becomes `nullable`). `shape` undoes those rewrites so the two
// can be compared field by field: names, types, enums, formats, required lists, descriptions. A route's request
// schemas are the SDK's own objects (its `schema.params`, `querystring` and `body`), so they need no such proof.
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

let server: TestServer;
let components: Record<string, Schema>;

beforeAll(async () => {
  server = await startTestServer();
  const doc = (await server.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  components = doc.components.schemas;
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
    expect(optional).toEqual([
      'approveApproval',
      'approveRun',
      'cancelRun',
      'pauseSchedule',
      'resumeSchedule',
      'rotateSecretKey',
      'rotateWebhookSecret',
      'startRun',
    ]);
    // One of them with no body at all gets past validation to the handler (an unknown run, not a body error);
    // a rejection with none is refused by the handler's own rule, and stays published as required.
    const headers = { authorization: `Bearer ${server.adminKey}` };
    const cancel = await server.app.inject({ method: 'POST', url: `/v1/runs/${randomUUID()}/cancel`, headers });
    expect([cancel.statusCode, cancel.json().code]).toEqual([404, 'api:runs:not-found']);
    const reject = await server.app.inject({ method: 'POST', url: `/v1/approvals/${randomUUID()}/reject`, headers });
    expect([reject.statusCode, reject.json().code]).toEqual([422, 'api:approvals:reason-required']);
  });
});
