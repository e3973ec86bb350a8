import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, createSecret, deployOk, sampleFiles, startTestServer, type TestServer } from './helpers.js';

let server: TestServer;
let counter = 0;

function idem(key: string, apiKey = server.adminKey): Record<string, string> {
  return { ...auth(apiKey), 'idempotency-key': key };
}

function freshKey(): string {
  counter += 1;
  return `test-${Date.now()}-${counter}`;
}

async function postKey(idemKey: string, name: string, apiKey = server.adminKey) {
  return server.app.inject({
    method: 'POST',
    url: '/v1/keys',
    headers: idem(idemKey, apiKey),
    payload: { name, role: 'admin' },
  });
}

async function keyNames(): Promise<string[]> {
  const { rows } = await server.db.query<{ name: string }>('SELECT name FROM mt_api_keys ORDER BY name');
  return rows.map((row) => row.name);
}

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.close();
});

describe('Idempotency-Key', () => {
  it('a retried POST /v1/keys answers the same key again, replayed, and creates exactly one key', async () => {
    const key = freshKey();
    const first = await postKey(key, 'retried-key');
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const second = await postKey(key, 'retried-key');
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.headers['content-type']).toMatch(/application\/json/);
    expect(second.json()).toEqual(first.json());
    expect((await keyNames()).filter((name) => name === 'retried-key')).toHaveLength(1);
  });

  it('a retried POST /v1/secrets answers the same 201 instead of 409', async () => {
    const key = freshKey();
    const send = () =>
      server.app.inject({
        method: 'POST',
        url: '/v1/secrets',
        headers: idem(key),
        payload: { name: 'retried-secret', value: 's3cr3t-value' },
      });
    const first = await send();
    expect(first.statusCode).toBe(201);
    const second = await send();
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.json()).toEqual(first.json());
    // Without the header the same request is a second call, refused as a duplicate.
    const plain = await server.app.inject({
      method: 'POST',
      url: '/v1/secrets',
      headers: auth(server.adminKey),
      payload: { name: 'retried-secret', value: 's3cr3t-value' },
    });
    expect(plain.statusCode).toBe(409);
  });

  it('a retried DELETE answers 204 again instead of 404', async () => {
    const created = await postKey(freshKey(), 'to-delete');
    const id = created.json().id as string;
    const key = freshKey();
    const send = () => server.app.inject({ method: 'DELETE', url: `/v1/keys/${id}`, headers: idem(key) });
    expect((await send()).statusCode).toBe(204);
    const again = await send();
    expect(again.statusCode).toBe(204);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe('');
  });

  it('the same key with another body answers 422 api:request:idempotency-key-reused and runs nothing', async () => {
    const key = freshKey();
    expect((await postKey(key, 'body-one')).statusCode).toBe(201);
    const other = await postKey(key, 'body-two');
    expect(other.statusCode).toBe(422);
    expect(other.json().code).toBe('api:request:idempotency-key-reused');
    expect(await keyNames()).not.toContain('body-two');
  });

  it('a key still in progress answers 409 api:request:in-progress and runs nothing', async () => {
    const key = freshKey();
    const admin = await server.db.query<{ id: string }>(
      "SELECT id FROM mt_api_keys WHERE namespace = 'default' ORDER BY created_at LIMIT 1",
    );
    await server.db.query(
      "INSERT INTO mt_idempotency_keys (namespace, api_key_id, idem_key, fingerprint) VALUES ('default', $1, $2, $3)",
      [admin.rows[0].id, key, Buffer.alloc(32)],
    );
    const res = await postKey(key, 'while-in-progress');
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('api:request:in-progress');
    expect(await keyNames()).not.toContain('while-in-progress');
  });

  it('a key whose request crashed mid-way (in progress past the lease) is taken over: the retry runs and is recorded', async () => {
    const key = freshKey();
    const admin = await server.db.query<{ id: string }>(
      "SELECT id FROM mt_api_keys WHERE namespace = 'default' ORDER BY created_at LIMIT 1",
    );
    // What a crash leaves: a claimed record that nobody completes or releases, 221 s old (the lease is 220 s).
    await server.db.query(
      'INSERT INTO mt_idempotency_keys (namespace, api_key_id, idem_key, fingerprint, created_at) ' +
        "VALUES ('default', $1, $2, $3, now() - interval '221 seconds')",
      [admin.rows[0].id, key, Buffer.alloc(32)],
    );
    const retry = await postKey(key, 'after-a-crash');
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(await keyNames()).toContain('after-a-crash');
    const again = await postKey(key, 'after-a-crash');
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(retry.json());
  });

  it('a 5xx answer is not recorded: a retry with the same key runs the route again', async () => {
    await server.db.exec(`
      CREATE FUNCTION mt_test_fail() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'test failure'; END $$;
      CREATE TRIGGER mt_test_fail BEFORE INSERT ON mt_secrets FOR EACH ROW EXECUTE FUNCTION mt_test_fail();
    `);
    const key = freshKey();
    const send = () =>
      server.app.inject({
        method: 'POST',
        url: '/v1/secrets',
        headers: idem(key),
        payload: { name: 'after-failure', value: 'v' },
      });
    try {
      const failed = await send();
      expect(failed.statusCode).toBe(500);
      const stored = await server.db.query('SELECT 1 FROM mt_idempotency_keys WHERE idem_key = $1', [key]);
      expect(stored.rowCount).toBe(0);
    } finally {
      await server.db.exec('DROP TRIGGER mt_test_fail ON mt_secrets; DROP FUNCTION mt_test_fail();');
    }
    const retried = await send();
    expect(retried.statusCode).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(retried.json().name).toBe('after-failure');
  });

  it('the same Idempotency-Key sent by two API keys runs once for each', async () => {
    const second = (await postKey(freshKey(), 'second-admin')).json().key as string;
    const key = freshKey();
    const a = await postKey(key, 'from-first');
    const b = await postKey(key, 'from-second', second);
    expect(a.statusCode).toBe(201);
    expect(b.statusCode).toBe(201);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(await keyNames()).toEqual(expect.arrayContaining(['from-first', 'from-second']));
  });

  it('the recorded answer lies encrypted: the raw table holds no trace of a created API key', async () => {
    const key = freshKey();
    const res = await postKey(key, 'sealed-answer');
    const created = res.json().key as string;
    expect(created).toMatch(/^mt_/);
    const { rows } = await server.db.query<{ raw: string }>(
      "SELECT concat_ws('|', fingerprint::text, status::text, iv::text, ciphertext::text, tag::text, " +
        "encode(ciphertext, 'escape')) AS raw FROM mt_idempotency_keys WHERE idem_key = $1",
      [key],
    );
    expect(rows).toHaveLength(1);
    const hex = Buffer.from(created, 'utf8').toString('hex');
    expect(rows[0].raw).not.toContain(created);
    expect(rows[0].raw).not.toContain(hex);
    expect(rows[0].raw).not.toContain('sealed-answer');
  });

  it('a record older than 24 hours is replaced: the request runs again', async () => {
    const key = freshKey();
    expect((await postKey(key, 'old-one')).statusCode).toBe(201);
    await server.db.query(
      "UPDATE mt_idempotency_keys SET created_at = now() - interval '25 hours' WHERE idem_key = $1",
      [key],
    );
    const again = await postKey(key, 'new-one');
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(await keyNames()).toContain('new-one');
  });

  it('an Idempotency-Key that is empty, too long or not visible ASCII answers 400 naming the header', async () => {
    for (const bad of ['', 'x'.repeat(256), 'has space', 'naïve']) {
      const res = await server.app.inject({
        method: 'POST',
        url: '/v1/keys',
        headers: { ...auth(server.adminKey), 'idempotency-key': bad },
        payload: { name: 'never', role: 'user' },
      });
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json().code).toBe('api:request:invalid');
      expect(res.json().error).toContain('Idempotency-Key');
    }
    expect(await keyNames()).not.toContain('never');
  });

  it('GET requests are untouched by the header', async () => {
    const key = freshKey();
    const first = await server.app.inject({ method: 'GET', url: '/v1/keys', headers: idem(key) });
    expect(first.statusCode).toBe(200);
    await postKey(freshKey(), 'after-get');
    const second = await server.app.inject({ method: 'GET', url: '/v1/keys', headers: idem(key) });
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(second.json().length).toBe(first.json().length + 1);
    const stored = await server.db.query('SELECT 1 FROM mt_idempotency_keys WHERE idem_key = $1', [key]);
    expect(stored.rowCount).toBe(0);
  });
});

describe('Idempotency-Key of a request that runs longer than the lease', () => {
  // A one-second lease (renewed every third of it) and an upstream that takes 3.5 s to answer the first call:
  // the request outlives its first lease several times over.
  const LEASE_SECONDS = 1;
  const FIRST_ANSWER_MS = 3_500;
  let slow: TestServer;
  let upstream: Server;
  let upstreamCalls = 0;

  beforeAll(async () => {
    upstream = createHttpServer((_req, res) => {
      upstreamCalls += 1;
      res.setHeader('content-type', 'application/json');
      const answer = JSON.stringify({ id: 'A-1', call: upstreamCalls });
      // Only the first call is slow: a retry that ran the route again would answer at once.
      if (upstreamCalls === 1) setTimeout(() => res.end(answer), FIRST_ANSWER_MS);
      else res.end(answer);
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const port = (upstream.address() as AddressInfo).port;
    slow = await startTestServer({
      hosts: ['orders.example.test'],
      server: { idempotencyLeaseSeconds: LEASE_SECONDS },
    });
    await createSecret(slow, 'orders-key', 'sk-orders-lease');
    await deployOk(slow, sampleFiles({ ordersUrl: `http://orders.example.test:${port}/orders/{orderId}` }));
  });

  afterAll(async () => {
    await slow?.close();
    await new Promise((resolve) => upstream?.close(resolve));
  });

  it('keeps its key while it runs: a retry past the first lease answers 409, then the answer is replayed', async () => {
    const key = freshKey();
    const send = () =>
      slow.app.inject({
        method: 'POST',
        url: '/v1/extops/get-order/call',
        headers: { ...auth(slow.adminKey), 'idempotency-key': key },
        payload: { arguments: { additionalInputs: { 'path.orderId': 'A-1' } } },
      });
    const started = Date.now();
    const first = send();
    while (upstreamCalls === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    // Two and a half leases after the claim, the first request still waits for the upstream.
    await new Promise((resolve) => setTimeout(resolve, LEASE_SECONDS * 2_500 - (Date.now() - started)));
    const retry = await send();
    expect(Date.now() - started).toBeLessThan(FIRST_ANSWER_MS);
    expect(retry.statusCode, retry.body).toBe(409);
    expect(retry.json().code).toBe('api:request:in-progress');

    const answered = await first;
    expect(answered.statusCode, answered.body).toBe(200);
    expect(answered.json()).toMatchObject({ ok: true, body: { id: 'A-1', call: 1 } });
    const replayed = await send();
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.json()).toEqual(answered.json());
    expect(upstreamCalls).toBe(1);
  });
});
