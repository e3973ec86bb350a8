import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, createSecret, deployOk, startTestServer, type TestServer } from './helpers.js';

let server: TestServer;

type Content = { content: { 'application/json': { schema: unknown } } };
interface Operation {
  responses: Record<string, Content>;
  requestBody?: Content;
  parameters: { name: string; in: string; required: boolean }[];
  operationId?: string;
}

// Every `METHOD /path` in a table row of docs/rest-api.md, in OpenAPI's `{param}` form.
function documentedRoutes(): string[] {
  const doc = readFileSync(fileURLToPath(new URL('../../../docs/rest-api.md', import.meta.url)), 'utf8');
  const routes = new Set<string>();
  for (const line of doc.split('\n').filter((l) => l.startsWith('|'))) {
    for (const match of line.matchAll(/`(GET|POST|PUT|DELETE) (\/[^\s`]*)`/g)) {
      routes.add(`${match[1]} ${match[2].replace(/:([a-zA-Z]+)/g, '{$1}')}`);
    }
  }
  return [...routes].sort();
}

beforeAll(async () => {
  server = await startTestServer();
  await createSecret(server, 'orders-key', 'orders-secret-value');
  await deployOk(server);
});

afterAll(async () => {
  await server?.close();
});

describe('the OpenAPI document', () => {
  it('lists exactly the routes of docs/rest-api.md, each with a success and an error answer schema', async () => {
    const doc = (await server.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const operations: string[] = [];
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Operation>>)) {
      for (const [method, operation] of Object.entries(methods)) {
        operations.push(`${method.toUpperCase()} ${path}`);
        const codes = Object.keys(operation.responses);
        const success = codes.find((code) => code.startsWith('2'));
        expect(success, `${method} ${path}`).toBeDefined();
        if (success !== '204') {
          // The run event stream is not JSON but Server-Sent Events, each a RunEvent; a file is its own bytes; the
          // audit export is JSON Lines, each an AuditEntry; the connect callback answers a person a page.
          const content = operation.responses[success!].content;
          const schema = path.endsWith('/stream')
            ? content['text/event-stream'].schema
            : operation.operationId === 'getFile'
              ? content['*/*'].schema
              : operation.operationId === 'exportAudit'
                ? content['application/jsonl'].schema
                : operation.operationId === 'connectionCallback'
                  ? content['text/html'].schema
                  : content['application/json'].schema;
          expect(schema, `${method} ${path}`).toBeTruthy();
        }
        // Each error status it can answer is declared with the Error schema (the health check answers 500 or 503).
        const error = codes.find((code) => code.startsWith(path === '/health' ? '5' : '4'));
        expect(
          operation.responses[error ?? '4XX']?.content['application/json'].schema,
          `${method} ${path}`,
        ).toBeTruthy();
        if (path.endsWith('/documents') && method === 'post') {
          // A knowledge base's document is the body itself: the file, in one of the types it takes.
          expect(Object.keys(operation.requestBody?.content ?? {}), `${method} ${path} body`).toContain(
            'application/pdf',
          );
        } else if (method === 'put' || (method === 'post' && !/\/(disable|enable|test)$/.test(path))) {
          // A file PUT takes the file itself, of any media type.
          const type = operation.operationId === 'putFile' ? '*/*' : 'application/json';
          expect(operation.requestBody?.content[type].schema, `${method} ${path} body`).toBeTruthy();
        }
        for (const name of path.match(/\{([a-zA-Z]+)\}/g) ?? []) {
          const param = operation.parameters.find((p) => `{${p.name}}` === name);
          expect(param, `${method} ${path} ${name}`).toMatchObject({ in: 'path', required: true });
        }
      }
    }
    expect(operations.sort()).toEqual(documentedRoutes().filter((route) => route !== 'GET /openapi.json'));
  });

  it('names each shared schema by its $id and refers to it from the routes', async () => {
    const doc = (await server.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const names = Object.keys(doc.components.schemas);
    expect(names).toEqual(expect.arrayContaining(['Error', 'Diagnostic', 'Connector', 'Tool', 'DeployPlan', 'Secret']));
    expect(names.filter((name) => /^def-\d+$/.test(name))).toEqual([]);
    expect(JSON.stringify(doc.paths)).toContain('"$ref":"#/components/schemas/DeployPlan"');
  });

  it('answers GET /health without a key, after asking the database', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'ok', wakeups: { listening: true } });
    // The cache lease: live once the first renewal answered, read-through (with its reason) before.
    expect(['live', 'read-through']).toContain(res.json().cache.mode);
    // Liveness: the process answers, nothing else asked.
    const live = await server.app.inject({ method: 'GET', url: '/health/live' });
    expect([live.statusCode, live.json()]).toEqual([200, { status: 'ok' }]);
    // Readiness under the orchestrators' name too: the same answer as /health.
    const ready = await server.app.inject({ method: 'GET', url: '/health/ready' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ status: 'ok', wakeups: { listening: true } });
  });
});

describe('answers go through their schemas', () => {
  it('never sends a field the schema does not list, even when the stored record has one', async () => {
    // A stored version with fields no schema knows (as a newer or tampered record could carry).
    await server.db.query(
      "INSERT INTO mt_resource_versions (namespace, kind, name, version, hash, resource, pins, definition) SELECT namespace, kind, name, version + 1, 'x', (resource::jsonb || '{\"internal\": \"leak-1\"}'::jsonb || jsonb_build_object('auth', jsonb_build_object('header', 'X-Api-Key', 'secret', 'orders-key', 'value', 'leak-2')))::json, pins, definition FROM mt_resource_versions WHERE kind = 'tool' AND name = 'get-order' AND version = 1",
    );
    const detail = await server.app.inject({
      method: 'GET',
      url: '/v1/extops/get-order',
      headers: auth(server.adminKey),
    });
    expect(detail.statusCode).toBe(200);
    expect(detail.json().version).toBe(2);
    expect(detail.json().resource.auth).toEqual({ header: 'X-Api-Key', secret: 'orders-key' });
    expect(detail.body).not.toContain('leak-1');
    expect(detail.body).not.toContain('leak-2');
    const secrets = await server.app.inject({ method: 'GET', url: '/v1/secrets', headers: auth(server.adminKey) });
    expect(Object.keys(secrets.json()[0]).sort()).toEqual(['createdAt', 'id', 'name', 'updatedAt']);
  });
});
