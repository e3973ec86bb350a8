import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  APIConnectionError,
  APITimeoutError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  Maitento,
  NotFoundError,
  PermissionDeniedError,
  UnprocessableEntityError,
} from './index.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

type Handler = (req: Seen, res: ServerResponse, count: number) => void;

// A real HTTP server on 127.0.0.1 whose answers each test scripts.
let handler: Handler;
let seen: Seen[] = [];
let baseUrl: string;
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const entry = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() };
    seen.push(entry);
    handler(entry, res, seen.length);
  });
});

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  seen = [];
});

function client(options: Partial<ConstructorParameters<typeof Maitento>[0]> = {}): Maitento {
  return new Maitento({ baseUrl, apiKey: 'mt_test', ...options });
}

describe('Maitento client requests', () => {
  it('sends the key as a bearer token and parses the JSON answer', async () => {
    handler = (_req, res) => json(res, 200, [{ name: 'orders', latestVersion: 2, enabled: true }]);
    const list = await client().connectors.list();
    expect(list).toEqual([{ name: 'orders', latestVersion: 2, enabled: true }]);
    expect(seen[0].method).toBe('GET');
    expect(seen[0].url).toBe('/v1/connectors');
    expect(seen[0].headers.authorization).toBe('Bearer mt_test');
    expect(seen[0].headers['idempotency-key']).toBeUndefined();
  });

  it('encodes path parameters so a name stays one segment', async () => {
    handler = (_req, res) => json(res, 200, { name: 'a/b?c', version: 3, enabled: false });
    await client().extops.disableVersion('a/b?c #1', 3);
    await client().connectors.get('x%y', { version: 2 });
    expect(seen.map((s) => s.url)).toEqual([
      '/v1/extops/a%2Fb%3Fc%20%231/versions/3/disable',
      '/v1/connectors/x%25y/versions/2',
    ]);
  });

  it('refuses a path parameter that URL parsing would remove', async () => {
    handler = (_req, res) => json(res, 200, {});
    for (const value of ['..', '.', '']) {
      const pending = client().secrets.delete(value);
      expect(pending).toBeInstanceOf(Promise);
      await expect(pending).rejects.toMatchObject({ code: 'api:sdk:invalid-argument', status: 400 });
    }
    expect(seen).toHaveLength(0);
  });

  it('sends the body as JSON with a fresh idempotency key on each non-GET call', async () => {
    handler = (_req, res) => json(res, 201, { id: 'k1', name: 'ci', role: 'user', key: 'mt_x', createdAt: 'now' });
    const created = await client().keys.create({ role: 'user', name: 'ci' });
    await client().keys.create({ role: 'user' });
    expect(created.key).toBe('mt_x');
    expect(JSON.parse(seen[0].body)).toEqual({ role: 'user', name: 'ci' });
    expect(seen[0].headers['content-type']).toBe('application/json');
    const keys = seen.map((s) => s.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^mt-[0-9a-f-]{36}$/);
    expect(keys[1]).toMatch(/^mt-[0-9a-f-]{36}$/);
    expect(keys[0]).not.toBe(keys[1]);
  });

  it('returns undefined for a 204 answer', async () => {
    handler = (_req, res) => {
      res.writeHead(204);
      res.end();
    };
    await expect(client().keys.delete('k1')).resolves.toBeUndefined();
    expect(seen[0].method).toBe('DELETE');
  });
});

describe('Maitento client errors', () => {
  const cases = [
    [400, BadRequestError, 'api:request:invalid'],
    [401, AuthenticationError, 'api:auth:unauthenticated'],
    [403, PermissionDeniedError, 'api:auth:forbidden'],
    [404, NotFoundError, 'api:connectors:not-found'],
    [409, ConflictError, 'api:extops:version-disabled'],
    [422, UnprocessableEntityError, 'api:deploy:invalid'],
  ] as const;
  for (const [status, ErrorClass, code] of cases) {
    it(`maps ${status} to ${ErrorClass.name} keeping the server's code and message`, async () => {
      handler = (_req, res) => json(res, status, { error: `told ${status}`, code });
      const error = await client()
        .connectors.list()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ErrorClass);
      expect(error).toMatchObject({ status, code, error: `told ${status}`, message: `told ${status}` });
      expect(seen).toHaveLength(1);
    });
  }

  it('keeps extra fields of the body, such as the diagnostics of a refused deploy', async () => {
    const diagnostics = [
      { code: 'mtr:ref:unknown', severity: 'error', message: 'x', file: 'a.mtr', line: 1, column: 2 },
    ];
    handler = (_req, res) => json(res, 422, { error: 'invalid', code: 'api:deploy:invalid', diagnostics });
    const error = await client()
      .deploy.create({ files: [] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect((error as UnprocessableEntityError).diagnostics).toEqual(diagnostics);
    expect((error as UnprocessableEntityError).body.diagnostics).toEqual(diagnostics);
  });

  it('gives an answer without an error body the unexpected-response code', async () => {
    handler = (_req, res) => {
      res.writeHead(418, { 'content-type': 'text/html' });
      res.end('<h1>teapot</h1>');
    };
    const error = await client()
      .secrets.list()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 418, code: 'api:sdk:unexpected-response' });
    expect((error as Error).message).toContain('answered 418');
  });

  it('names the URL it tried when the connection is refused, after its retries', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const mt = new Maitento({ baseUrl: `http://127.0.0.1:${port}`, maxRetries: 1 });
    const error = await mt.connectors.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error).toMatchObject({ code: 'api:sdk:connection-failed' });
    expect((error as Error).message).toBe(`could not connect to http://127.0.0.1:${port}/v1/connectors: ECONNREFUSED`);
  });

  it('times out a stalled answer with APITimeoutError and retries it', async () => {
    handler = (_req, res, count) => {
      if (count === 1) return; // never answers; closed by afterAll
      json(res, 200, []);
    };
    await expect(client({ timeoutMs: 200 }).extops.list()).resolves.toEqual([]);
    expect(seen).toHaveLength(2);
    seen = [];
    handler = () => {};
    const error = await client({ timeoutMs: 150, maxRetries: 0 })
      .extops.list()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(error).toMatchObject({ code: 'api:sdk:timeout' });
  });
});

describe('a call by hand (mt.extops.call)', () => {
  it('waits for the gateway longer than the default timeout instead of retrying a call still under way', async () => {
    handler = (req, res) => {
      setTimeout(() => json(res, 200, req.url.endsWith('/call') ? { ok: true, status: 200, body: 'done' } : []), 400);
    };
    const mt = client({ timeoutMs: 150, maxRetries: 1 });
    await expect(mt.extops.call('refund-order', { arguments: {} })).resolves.toEqual({
      ok: true,
      status: 200,
      body: 'done',
    });
    expect(seen).toHaveLength(1);
    seen = [];
    await expect(mt.extops.list()).rejects.toBeInstanceOf(APITimeoutError);
  });
});

describe('Maitento client retries', () => {
  it('retries 503 and 429 with the same idempotency key, then succeeds', async () => {
    handler = (_req, res, count) => {
      if (count === 1) return json(res, 503, { error: 'busy', code: 'api:server:busy' }, { 'retry-after': '0' });
      if (count === 2) return json(res, 429, { error: 'slow down', code: 'api:server:rate' }, { 'retry-after': '0' });
      json(res, 201, { id: 's1', name: 'db', createdAt: 'a', updatedAt: 'a' });
    };
    const secret = await client().secrets.create({ name: 'db', value: 'hunter2' });
    expect(secret.id).toBe('s1');
    expect(seen).toHaveLength(3);
    const keys = new Set(seen.map((s) => s.headers['idempotency-key']));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(/^mt-/);
  });

  it('uses the idempotency key the caller gives', async () => {
    handler = (_req, res, count) =>
      count === 1
        ? json(res, 500, { error: 'x', code: 'api:server:internal' }, { 'retry-after': '0' })
        : json(res, 200, {});
    await client().extops.call('t', { arguments: {} }, { idempotencyKey: 'mine-1' });
    expect(seen.map((s) => s.headers['idempotency-key'])).toEqual(['mine-1', 'mine-1']);
  });

  it('gives up after maxRetries and throws the last answer', async () => {
    handler = (_req, res) => json(res, 502, { error: 'down', code: 'api:server:down' }, { 'retry-after': '0' });
    const error = await client({ maxRetries: 2 })
      .connectors.list()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ status: 502, code: 'api:server:down' });
    expect(seen).toHaveLength(3);
  });

  it('stops at once without retrying when the caller aborts', async () => {
    handler = () => {}; // never answers
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('caller gave up')), 100);
    await expect(client({ timeoutMs: 5_000 }).connectors.list({ signal: controller.signal })).rejects.toThrow(
      'caller gave up',
    );
    expect(seen).toHaveLength(1);
  });

  it('does not retry a 4xx other than 408 and 429', async () => {
    handler = (_req, res) => json(res, 409, { error: 'disabled', code: 'api:extops:version-disabled' });
    await expect(client().extops.call('t', { arguments: {} })).rejects.toBeInstanceOf(ConflictError);
    expect(seen).toHaveLength(1);
  });

  it('waits the seconds retry-after asks for before retrying', async () => {
    handler = (_req, res, count) =>
      count === 1
        ? json(res, 408, { error: 'slow', code: 'api:request:timeout' }, { 'retry-after': '1' })
        : json(res, 200, []);
    const started = Date.now();
    await client().connectors.list();
    const waited = Date.now() - started;
    expect(seen).toHaveLength(2);
    expect(waited).toBeGreaterThanOrEqual(950);
    expect(waited).toBeLessThan(3000);
  });

  it('waits until the HTTP date retry-after names', async () => {
    // HTTP dates have one-second precision, so the target is the next whole second plus one.
    const target = new Date((Math.floor(Date.now() / 1000) + 2) * 1000);
    handler = (_req, res, count) =>
      count === 1
        ? json(res, 503, { error: 'busy', code: 'api:server:busy' }, { 'retry-after': target.toUTCString() })
        : json(res, 200, []);
    await client().connectors.list();
    expect(seen).toHaveLength(2);
    expect(Date.now()).toBeGreaterThanOrEqual(target.getTime() - 50);
  });
});
