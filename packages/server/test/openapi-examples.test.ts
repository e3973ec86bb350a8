import { randomUUID } from 'node:crypto';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorSpec } from '../src/openapi/document.js';
import { auth, createSecret, startTestServer, type TestServer } from './helpers.js';

// The served document's examples, descriptions and error statuses: every request body and answer has an example
// that its schema accepts; every operation says what it does and what each answer is; each error status is
// declared with the codes it carries, and what the server answers to requests probing each operation (no key, a
// user key, the example body, a body it cannot take) is one of the statuses and codes declared.
type Schema = Record<string, unknown>;
type Media = { schema?: Schema; example?: unknown; examples?: Record<string, { value: unknown }> };
interface Operation {
  operationId: string;
  description?: string;
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { description: string; content?: Record<string, Media> }>;
}

let server: TestServer;
let doc: { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };
const operations: { method: string; path: string; op: Operation }[] = [];

beforeAll(async () => {
  server = await startTestServer();
  const res = await server.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode, res.body).toBe(200);
  doc = res.json();
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) operations.push({ method: method.toUpperCase(), path, op });
  }
});

afterAll(async () => {
  await server?.close();
});

/** A validator of the document's schemas (OpenAPI 3.0: `nullable`, `example`), with its formats checked. */
function validator() {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ components: doc.components }, 'doc');
  const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
  return (schema: Schema, value: unknown): string[] => {
    const text = JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/');
    const validate = compiled.get(text) ?? ajv.compile(JSON.parse(text));
    compiled.set(text, validate);
    return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
  };
}

describe('examples', () => {
  it('shows an example of every request body and every answer with a body, which its schema accepts', () => {
    const check = validator();
    const problems: string[] = [];
    let checked = 0;
    for (const { method, path, op } of operations) {
      const media: [string, Media][] = [
        ...Object.entries(op.requestBody?.content ?? {}).map(([t, m]) => [`body ${t}`, m] as [string, Media]),
        ...Object.entries(op.responses).flatMap(([status, r]) =>
          Object.entries(r.content ?? {}).map(([t, m]) => [`${status} ${t}`, m] as [string, Media]),
        ),
      ];
      for (const [where, m] of media) {
        const values = m.examples ? Object.values(m.examples).map((e) => e.value) : [m.example];
        if (values.length === 0 || values.some((v) => v === undefined)) {
          problems.push(`${method} ${path} ${where}: no example`);
          continue;
        }
        for (const value of values) {
          checked++;
          for (const error of check(m.schema ?? {}, value)) problems.push(`${method} ${path} ${where}: ${error}`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(300);
  });

  it('shows a stream example framed as Server-Sent Events, each data line a RunEvent', () => {
    const check = validator();
    const stream = operations.find((o) => o.op.operationId === 'streamRunEvents')!.op;
    const text = stream.responses['200'].content!['text/event-stream'].example as string;
    const events = text.split('\n\n').filter(Boolean);
    expect(events.length).toBeGreaterThan(1);
    for (const event of events) {
      const [id, type, data] = event.split('\n');
      const value = JSON.parse(data.slice('data: '.length));
      expect([id, type]).toEqual([`id: ${value.seq}`, `event: ${value.type}`]);
      expect(check({ $ref: '#/components/schemas/RunEvent' }, value)).toEqual([]);
    }
  });
});

describe('descriptions and error statuses', () => {
  it('describes every operation and every answer, and names no catch-all 4XX or 5XX', () => {
    for (const { method, path, op } of operations) {
      expect(op.description?.length ?? 0, `${method} ${path}`).toBeGreaterThan(30);
      for (const [status, response] of Object.entries(op.responses)) {
        expect(response.description, `${method} ${path} ${status}`).not.toBe('Default Response');
        expect(response.description.length, `${method} ${path} ${status}`).toBeGreaterThan(5);
      }
      expect(
        Object.keys(op.responses).filter((s) => /X/i.test(s)),
        `${method} ${path}`,
      ).toEqual([]);
    }
  });

  it("declares each error status with the Error schema and an example of each code, at that code's status", () => {
    for (const { method, path, op } of operations) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400 || op.operationId === 'getHealth') continue;
        const media = response.content!['application/json'];
        expect(media.schema, `${method} ${path} ${status}`).toEqual({ $ref: '#/components/schemas/Error' });
        const codes = Object.values(media.examples ?? {}).map((e) => (e.value as { code: string }).code);
        expect(codes.length, `${method} ${path} ${status}`).toBeGreaterThan(0);
        for (const code of codes) {
          expect(errorSpec(code).status, code).toBe(Number(status));
          expect(response.description, `${method} ${path} ${status}`).toContain(`\`${code}\``);
        }
      }
      // Every /v1 operation needs a key (401), but the connect callback, which a person's browser opens, and an inbound
      // webhook, which its sender's signature verifies (no security).
      const keyless =
        Array.isArray((op as { security?: unknown[] }).security) &&
        (op as { security: unknown[] }).security.length === 0;
      if (path.startsWith('/v1/')) {
        expect(Object.keys(op.responses), `${method} ${path}`).toEqual(
          expect.arrayContaining(keyless ? ['500', '503'] : ['401', '500', '503']),
        );
      }
      if (keyless && path.startsWith('/v1/')) {
        expect(['GET /v1/connections/callback', 'POST /v1/hooks/{namespace}/{name}']).toContain(`${method} ${path}`);
      }
    }
  });

  it("declares the 304 a file read answers to If-None-Match with the file's ETag", async () => {
    const headers = auth(server.adminKey);
    const fs = await server.app.inject({
      method: 'POST',
      url: '/v1/file-systems',
      headers,
      payload: { name: `etag-${randomUUID().slice(0, 8)}` },
    });
    const url = `/v1/file-systems/${fs.json().id}/files/notes.md`;
    const put = await server.app.inject({
      method: 'PUT',
      url,
      headers: { ...headers, 'content-type': 'text/markdown' },
      payload: '# Notes\n',
    });
    expect(put.statusCode).toBe(201);
    const again = await server.app.inject({
      method: 'GET',
      url,
      headers: { ...headers, 'if-none-match': put.json().etag },
    });
    expect(again.statusCode).toBe(304);
    const read = operations.find(({ op }) => op.operationId === 'getFile')?.op;
    expect(Object.keys(read?.responses ?? {})).toContain('304');
  });

  it('answers requests probing every operation only with the statuses and codes it declares', async () => {
    const created = await server.app.inject({
      method: 'POST',
      url: '/v1/keys',
      headers: auth(server.adminKey),
      payload: { name: 'probe user', role: 'user' },
    });
    const userKey = created.json().key as string;
    // The secret the example config repo's get-order sends, so the deploy example deploys.
    await createSecret(server, 'orders-key', 'the orders API key');
    const answers = new Map<string, number[]>();
    const undeclared: string[] = [];
    let probes = 0;
    for (const { method, path, op } of operations) {
      const url = path
        .replace('{id}', randomUUID())
        .replace('{documentId}', randomUUID())
        .replace('{name}', 'no-such-name')
        .replace('{version}', '7')
        .replace('{path}', 'missing.txt');
      const query = (op.parameters ?? []).some((p) => p.in === 'query' && p.required) ? '?name=probe.md' : '';
      const [type, media] = Object.entries(op.requestBody?.content ?? {})[0] ?? [];
      const contentType = type === undefined ? undefined : type === '*/*' ? 'text/plain' : type;
      const example = media?.example;
      const body = typeof example === 'string' ? example : example === undefined ? undefined : JSON.stringify(example);
      const tries: { who: string; headers: Record<string, string>; payload?: string }[] = [
        { who: 'no key', headers: {} },
        { who: 'user key', headers: auth(userKey) },
        { who: 'admin key', headers: auth(server.adminKey) },
        // Again: what the first one created now exists (a namespace, a secret, a file system of that name).
        ...(method === 'GET' ? [] : [{ who: 'admin key again', headers: auth(server.adminKey) }]),
      ];
      if (contentType === 'application/json') {
        tries.push({ who: 'unknown field', headers: auth(server.adminKey), payload: '{"unknownField":1}' });
        tries.push({ who: 'not JSON', headers: auth(server.adminKey), payload: '{' });
      }
      for (const t of tries) {
        const payload = t.payload ?? body;
        const headers = {
          ...t.headers,
          ...(payload === undefined || !contentType ? {} : { 'content-type': contentType }),
        };
        const res = await server.app.inject({ method: method as 'GET', url: url + query, headers, payload });
        probes++;
        answers.set(op.operationId, [...(answers.get(op.operationId) ?? []), res.statusCode]);
        const declared = op.responses[String(res.statusCode)];
        const where = `${method} ${path} (${t.who}) answered ${res.statusCode}`;
        if (!declared) {
          undeclared.push(`${where}: status not declared (${res.body.slice(0, 160)})`);
          continue;
        }
        if (res.statusCode >= 400 && op.operationId !== 'getHealth') {
          const code = res.json().code as string;
          const codes = Object.values(declared.content?.['application/json']?.examples ?? {}).map(
            (e) => (e.value as { code: string }).code,
          );
          if (!codes.includes(code)) undeclared.push(`${where} ${code}: code not declared`);
        }
      }
    }
    expect(undeclared).toEqual([]);
    expect(probes).toBeGreaterThan(200);
    // The examples of bodies that need nothing else are accepted as they are.
    for (const id of ['deploy', 'createNamespace', 'createKnowledgeBase', 'createFileSystem', 'rotateSecretKey']) {
      expect(answers.get(id)?.filter((status) => status < 300).length, id).toBeGreaterThan(0);
    }
  });
});
