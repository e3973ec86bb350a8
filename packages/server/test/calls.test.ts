import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, createSecret, deployOk, sampleFiles, startTestServer, type TestServer } from './helpers.js';

const SECRET_VALUE = 'sk-orders-4f8a9c2e7b1d';
const ROTATED_VALUE = 'sk-orders-rotated-99aa77';

let server: TestServer;
let upstream: Server;
const seen: { url: string; headers: IncomingHttpHeaders }[] = [];

async function call(name: string, args: Record<string, unknown>, version?: number) {
  return server.app.inject({
    method: 'POST',
    url: `/v1/extops/${name}/call`,
    headers: auth(server.adminKey),
    payload: { arguments: args, ...(version === undefined ? {} : { version }) },
  });
}

async function post(url: string) {
  return server.app.inject({ method: 'POST', url, headers: auth(server.adminKey) });
}

const orderArgs = { additionalInputs: { 'path.orderId': 'A-1001' } };

beforeAll(async () => {
  upstream = createHttpServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ id: 'A-1001', status: 'shipped' }));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const port = (upstream.address() as AddressInfo).port;
  server = await startTestServer({ hosts: ['orders.example.test'] });
  await createSecret(server, 'orders-key', SECRET_VALUE);
  await deployOk(server, sampleFiles({ ordersUrl: `http://orders.example.test:${port}/orders/{orderId}` }));
});

afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => upstream?.close(resolve));
});

describe('POST /v1/extops/:name/call', () => {
  it('makes one call through the gateway with the namespace secret in the tool header', async () => {
    const res = await call('get-order', orderArgs);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ ok: true, status: 200, body: { id: 'A-1001', status: 'shipped' } });
    expect(seen.at(-1)).toMatchObject({ url: '/orders/A-1001', headers: { 'x-api-key': SECRET_VALUE } });
  });

  it('refuses calls pinned to a disabled connector or tool version, and works again once enabled', async () => {
    const before = seen.length;
    const disabled = await post('/v1/connectors/orders-get/versions/1/disable');
    expect(disabled.json()).toEqual({ name: 'orders-get', version: 1, enabled: false });
    const refused = await call('get-order', orderArgs);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().code).toBe('api:connectors:version-disabled');
    expect(refused.json().error).toMatch(/Version 1 of connector orders-get is disabled/);
    await post('/v1/connectors/orders-get/versions/1/enable');

    await post('/v1/extops/get-order/versions/1/disable');
    const tool = await call('get-order', orderArgs);
    expect([tool.statusCode, tool.json().code]).toEqual([409, 'api:extops:version-disabled']);
    const listed = await server.app.inject({ method: 'GET', url: '/v1/extops', headers: auth(server.adminKey) });
    expect(listed.json()).toContainEqual({
      name: 'get-order',
      latestVersion: 1,
      enabled: false,
      callable: false,
      reason: 'version 1 is disabled',
    });
    expect(seen.length).toBe(before);

    const enabled = await post('/v1/extops/get-order/versions/1/enable');
    expect(enabled.json()).toEqual({ name: 'get-order', version: 1, enabled: true });
    const again = await call('get-order', orderArgs);
    expect(again.json().ok).toBe(true);
    expect(seen.length).toBe(before + 1);
  });

  it('a disabled old connector version stops only the tool versions pinned to it', async () => {
    const port = new URL(`http://${seen[0].headers.host}`).port;
    // A new connector version: get-order@2 is pinned to orders-get@2; get-order@1 stays on orders-get@1.
    const files = sampleFiles({ ordersUrl: `http://orders.example.test:${port}/v2/orders/{orderId}` });
    await deployOk(server, files);
    await post('/v1/connectors/orders-get/versions/1/disable');
    expect((await call('get-order', orderArgs)).json()).toMatchObject({ ok: true });
    expect(seen.at(-1)?.url).toBe('/v2/orders/A-1001');
    const old = await call('get-order', orderArgs, 1);
    expect([old.statusCode, old.json().code]).toEqual([409, 'api:connectors:version-disabled']);
  });

  it('answers 404 for an unknown tool or version', async () => {
    expect((await call('no-such-tool', {})).json().code).toBe('api:extops:not-found');
    expect((await call('get-order', orderArgs, 99)).json().code).toBe('api:extops:not-found');
  });
});

describe('secret values', () => {
  it('appear in no response and no log line, also after rotation', async () => {
    const listed = await server.app.inject({ method: 'GET', url: '/v1/secrets', headers: auth(server.adminKey) });
    const [secret] = listed.json();
    expect(Object.keys(secret).sort()).toEqual(['createdAt', 'id', 'name', 'updatedAt']);
    const rotated = await server.app.inject({
      method: 'PUT',
      url: `/v1/secrets/${secret.id}`,
      headers: auth(server.adminKey),
      payload: { value: ROTATED_VALUE },
    });
    expect(rotated.statusCode).toBe(200);
    const bodies = [listed.body, rotated.body, (await call('get-order', orderArgs)).body];
    expect(seen.at(-1)?.headers['x-api-key']).toBe(ROTATED_VALUE);
    const invalid = await server.app.inject({
      method: 'POST',
      url: '/v1/secrets',
      headers: auth(server.adminKey),
      payload: { name: 'bad name!', value: SECRET_VALUE },
    });
    expect(invalid.statusCode).toBe(400);
    bodies.push(invalid.body);
    const raw = await server.db.query('SELECT * FROM mt_secrets');
    const rawText = JSON.stringify(raw.rows, (_k, v) =>
      v?.type === 'Buffer' ? Buffer.from(v.data).toString('latin1') : v,
    );
    for (const text of [...bodies, rawText, ...server.logs]) {
      expect(text).not.toContain(SECRET_VALUE);
      expect(text).not.toContain(ROTATED_VALUE);
      expect(text).not.toContain(server.adminKey);
    }
    expect(server.logs.length).toBeGreaterThan(10);
  });
});

describe('a call by hand that the client retries', () => {
  it('hands the upstream the same Idempotency-Key when a retry of a crashed call runs again, another for a new call', async () => {
    const port = new URL(`http://${seen[0].headers.host}`).port;
    const files = [
      ...sampleFiles({ ordersUrl: `http://orders.example.test:${port}/v2/orders/{orderId}` }),
      {
        path: 'connectors/open-api/orders-refund.mtr',
        content: `method = "POST"
url = "http://orders.example.test:${port}/orders/{orderId}/refund"
description = "Refunds an order"
auth = "Header"
parameters.path = [ { name = "orderId" } ]
schema.request = { type = "object" properties = { amount = { type = "number" } } required = ["amount"] }
`,
      },
      {
        path: 'external-operations/open-api/refund-order.mtr',
        content: `connector = @ref("orders-refund")
guidance = "Refunds"
auth = { header = "X-Api-Key" secret = @ref("orders-key") }
`,
      },
    ];
    await deployOk(server, files);
    const refund = (key: string) =>
      server.app.inject({
        method: 'POST',
        url: '/v1/extops/refund-order/call',
        headers: { ...auth(server.adminKey), 'idempotency-key': key },
        payload: { arguments: { request: { amount: 12.5 }, additionalInputs: { 'path.orderId': 'A-1001' } } },
      });
    // Each call that reaches the upstream adds one request there; its Idempotency-Key is what is compared.
    const reach = async (key: string) => {
      const before = seen.length;
      const res = await refund(key);
      expect(res.json().ok, res.body).toBe(true);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
      expect(seen.length, `the call with ${key} reached the upstream once`).toBe(before + 1);
      expect(seen.at(-1)?.url).toBe('/orders/A-1001/refund');
      return seen.at(-1)?.headers['idempotency-key'];
    };
    const first = await reach('retry-me');
    // The server crashed after the upstream had the request and before it recorded the answer: the record is
    // left in progress, and a retry past the lease runs the call again, so this retry does reach the upstream.
    const { rowCount } = await server.db.query(
      "UPDATE mt_idempotency_keys SET status = NULL, iv = NULL, ciphertext = NULL, tag = NULL, created_at = now() - interval '1 hour' WHERE idem_key = 'retry-me'",
    );
    expect(rowCount).toBe(1);
    const retry = await reach('retry-me');
    const other = await reach('a-new-call');
    expect(first).toMatch(/^mt-/);
    expect(retry).toBe(first);
    expect(other).not.toBe(first);
    // The upstream's key is derived, not the client's own text.
    expect(first).not.toContain('retry-me');
    // A retry while the answer is recorded is answered by the server itself and never reaches the upstream.
    const before = seen.length;
    const replayed = await refund('retry-me');
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(seen.length).toBe(before);
  });
});
