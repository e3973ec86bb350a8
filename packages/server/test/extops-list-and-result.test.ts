import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, createSecret, deployOk, sampleFiles, startTestServer, type TestServer } from './helpers.js';

// The call result keeps `truncated`; the tool list says whether each tool can be called at all.
let server: TestServer;
let upstream: Server;
// A body past the gateway's 100,000-byte limit, sent with its declared length.
const big = JSON.stringify({ id: 'A-1001', notes: 'x'.repeat(150_000) });

async function get(url: string) {
  return server.app.inject({ method: 'GET', url, headers: auth(server.adminKey) });
}

async function post(url: string, payload?: unknown) {
  return server.app.inject({ method: 'POST', url, headers: auth(server.adminKey), payload: payload as object });
}

beforeAll(async () => {
  upstream = createHttpServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(big) });
    res.end(big);
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const port = (upstream.address() as AddressInfo).port;
  server = await startTestServer({ hosts: ['orders.example.test'] });
  await createSecret(server, 'orders-key', 'sk-list-1');
  await deployOk(server, sampleFiles({ ordersUrl: `http://orders.example.test:${port}/orders/{orderId}` }));
});

afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => upstream?.close(resolve));
});

describe('POST /v1/extops/:name/call', () => {
  it('says that the body was cut, with the limit and the declared size', async () => {
    const res = await post('/v1/extops/get-order/call', { arguments: { additionalInputs: { 'path.orderId': 'A-1' } } });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.truncated).toEqual({ limit: 100_000, size: Buffer.byteLength(big) });
    expect(typeof body.body).toBe('string');
    expect(body.body.length).toBe(100_000);
  });
});

describe('GET /v1/extops', () => {
  it('lists a tool as not callable, with the reason, while its pinned connector version is disabled', async () => {
    const callable = (await get('/v1/extops')).json();
    expect(callable).toContainEqual({ name: 'get-order', latestVersion: 1, enabled: true, callable: true });

    await post('/v1/connectors/orders-get/versions/1/disable');
    const listed = (await get('/v1/extops')).json();
    expect(listed).toContainEqual({
      name: 'get-order',
      latestVersion: 1,
      enabled: true,
      callable: false,
      reason: 'connector orders-get version 1 is disabled',
    });
    expect(listed).toContainEqual({ name: 'current-weather', latestVersion: 1, enabled: true, callable: true });

    await post('/v1/connectors/orders-get/versions/1/enable');
    await post('/v1/extops/get-order/versions/1/disable');
    expect((await get('/v1/extops')).json()).toContainEqual({
      name: 'get-order',
      latestVersion: 1,
      enabled: false,
      callable: false,
      reason: 'version 1 is disabled',
    });
    await post('/v1/extops/get-order/versions/1/enable');
  });
});
