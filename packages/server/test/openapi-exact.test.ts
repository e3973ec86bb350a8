import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, createSecret, startTestServer, type TestServer } from './helpers.js';

// The document says what the server does: which body fields it requires, which headers it reads and writes,
// the formats of its timestamps and ids, and that the run event stream is Server-Sent Events.
type Schema = Record<string, unknown> & { properties?: Record<string, Schema>; required?: string[] };
interface Operation {
  operationId: string;
  parameters?: { name: string; in: string; required: boolean; schema: Schema }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<
    string,
    { description: string; headers?: Record<string, unknown>; content?: Record<string, Schema> }
  >;
}

let server: TestServer;
let components: Record<string, Schema>;
let doc: { tags?: { name: string; description?: string }[]; info: { contact?: unknown } };
const operations: { method: string; path: string; op: Operation }[] = [];
const byId = (id: string) => operations.find((o) => o.op.operationId === id)!.op;

beforeAll(async () => {
  server = await startTestServer();
  doc = (await server.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  components = doc.components.schemas;
  for (const [path, methods] of Object.entries(
    (doc as unknown as { paths: unknown }).paths as Record<string, Record<string, Operation>>,
  )) {
    for (const [method, op] of Object.entries(methods)) operations.push({ method: method.toUpperCase(), path, op });
  }
});

afterAll(async () => {
  await server?.close();
});

describe('required fields', () => {
  it('requires the reason of both rejections, and of neither approval', () => {
    const body = (id: string) => byId(id).requestBody!.content['application/json'].schema;
    expect(body('rejectRun').required).toEqual(['reason']);
    expect(body('rejectApproval').required).toEqual(['reason']);
    expect(byId('rejectRun').requestBody!.required).toBe(true);
    expect(body('approveRun').required).toBeUndefined();
    expect(body('approveApproval').required).toBeUndefined();
  });

  it('answers a rejection without its reason with 422 api:approvals:reason-required on both routes', async () => {
    for (const [url, payload] of [
      [`/v1/runs/${randomUUID()}/reject`, { approvalId: randomUUID() }],
      [`/v1/approvals/${randomUUID()}/reject`, {}],
    ] as const) {
      const res = await server.app.inject({ method: 'POST', url, headers: auth(server.adminKey), payload });
      expect([res.statusCode, res.json().code], url).toEqual([422, 'api:approvals:reason-required']);
    }
  });
});

describe('headers', () => {
  it('declares Idempotency-Key and Idempotent-Replayed on every /v1 POST, PUT and DELETE, and on no GET', () => {
    const writes = operations.filter((o) => o.path.startsWith('/v1/') && o.method !== 'GET');
    expect(writes.length).toBeGreaterThan(20);
    for (const { method, path, op } of writes) {
      const key = op.parameters?.find((p) => p.in === 'header' && p.name === 'Idempotency-Key');
      expect(key, `${method} ${path}`).toMatchObject({ required: false, schema: { type: 'string', maxLength: 255 } });
      for (const [status, response] of Object.entries(op.responses)) {
        const replayed = response.headers?.['Idempotent-Replayed'];
        if (status.startsWith('5')) expect(replayed, `${method} ${path} ${status}`).toBeUndefined();
        else expect(replayed, `${method} ${path} ${status}`).toMatchObject({ schema: { enum: ['true'] } });
      }
    }
    for (const { method, path, op } of operations.filter((o) => o.method === 'GET')) {
      expect(
        op.parameters?.some((p) => p.name === 'Idempotency-Key'),
        `${method} ${path}`,
      ).not.toBe(true);
    }
  });

  it('sends Idempotent-Replayed as declared on a replay', async () => {
    const request = {
      method: 'POST' as const,
      url: '/v1/secrets',
      headers: { ...auth(server.adminKey), 'idempotency-key': 'exact-doc-1' },
      payload: { name: 'replayed-secret', value: 'v' },
    };
    const first = await server.app.inject(request);
    const again = await server.app.inject(request);
    expect([first.statusCode, first.headers['idempotent-replayed']]).toEqual([201, undefined]);
    expect([again.statusCode, again.headers['idempotent-replayed']]).toEqual([201, 'true']);
  });

  it('declares Last-Event-ID on the run event stream', () => {
    const header = byId('streamRunEvents').parameters?.find((p) => p.in === 'header');
    expect(header).toMatchObject({ name: 'Last-Event-ID', required: false });
  });
});

describe('the run event stream', () => {
  it('is text/event-stream with the event schema under x-event-schema and the framing described', () => {
    const ok = byId('streamRunEvents').responses['200'];
    expect(Object.keys(ok.content!)).toEqual(['text/event-stream']);
    const media = ok.content!['text/event-stream'];
    expect(media.schema).toMatchObject({ type: 'string' });
    expect(media['x-event-schema']).toEqual({ $ref: '#/components/schemas/RunEvent' });
    expect(ok.description).toContain('id: <seq>');
    expect(ok.description).toContain('event: <type>');
    expect(ok.description).toContain('data: <one RunEvent as JSON>');
  });
});

describe('formats', () => {
  it('marks timestamps date-time and record ids uuid', () => {
    const field = (name: string, prop: string) => components[name].properties![prop];
    for (const [name, prop] of [
      ['Run', 'createdAt'],
      ['Run', 'updatedAt'],
      ['RunSummary', 'createdAt'],
      ['RunEvent', 'at'],
      ['Approval', 'createdAt'],
      ['Secret', 'updatedAt'],
      ['KeyInfo', 'createdAt'],
      ['VersionSummary', 'createdAt'],
    ]) {
      expect(field(name, prop), `${name}.${prop}`).toMatchObject({ type: 'string', format: 'date-time' });
    }
    for (const [name, prop] of [
      ['Run', 'id'],
      ['RunSummary', 'id'],
      ['Approval', 'id'],
      ['KeyInfo', 'id'],
      ['Secret', 'id'],
      ['FileSystem', 'id'],
    ]) {
      expect(field(name, prop), `${name}.${prop}`).toMatchObject({ type: 'string', format: 'uuid' });
    }
    const nullableAt = JSON.stringify(field('Approval', 'answeredAt'));
    expect(nullableAt).toContain('"format":"date-time"');
  });

  it('sends ids and timestamps in those formats', async () => {
    const secret = (await createSecret(server, 'formatted', 'value')) as { id: string; createdAt?: string };
    const keys = (await server.app.inject({ method: 'GET', url: '/v1/keys', headers: auth(server.adminKey) })).json();
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    const dateTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
    for (const record of [secret, keys[0]]) {
      expect(record.id).toMatch(uuid);
      expect(record.createdAt).toMatch(dateTime);
    }
  });
});

describe('the document as a whole', () => {
  it('declares every tag its operations use, each with a description, and a contact', () => {
    const used = new Set(operations.flatMap(({ op }) => (op as { tags?: string[] }).tags ?? []));
    expect(doc.tags?.map((t) => t.name).sort()).toEqual([...used].sort());
    for (const tag of doc.tags ?? []) expect(tag.description, tag.name).toBeTruthy();
    expect(doc.info.contact).toMatchObject({ url: 'https://github.com/maitento/maitento/issues' });
  });

  it("describes the cursors of paged lists as the previous page's nextCursor", () => {
    for (const id of ['listRuns', 'listFiles']) {
      const cursor = byId(id).parameters?.find((p) => p.name === 'cursor') as { description?: string } | undefined;
      expect(cursor?.description, id).toContain('nextCursor');
    }
  });
});
