import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, createSecret, sampleFiles, startTestServer, type TestServer } from './helpers.js';

let server: TestServer;
let otherAdmin: string;
let userKey: string;

async function deploy(key: string, files = sampleFiles()) {
  return server.app.inject({ method: 'POST', url: '/v1/deploy', headers: auth(key), payload: { files } });
}

beforeAll(async () => {
  server = await startTestServer();
  await createSecret(server, 'orders-key', 'default-orders-key');
  expect((await deploy(server.adminKey)).statusCode).toBe(200);
  const ns = await server.app.inject({
    method: 'POST',
    url: '/v1/namespaces',
    headers: auth(server.adminKey),
    payload: { name: 'team-b' },
  });
  expect(ns.statusCode).toBe(201);
  otherAdmin = ns.json().key.key;
  const user = await server.app.inject({
    method: 'POST',
    url: '/v1/keys',
    headers: auth(server.adminKey),
    payload: { name: 'reader', role: 'user' },
  });
  expect(user.statusCode).toBe(201);
  userKey = user.json().key;
});

afterAll(async () => {
  await server?.close();
});

describe('roles', () => {
  it('a user key can read but cannot deploy, disable, manage secrets or keys (403)', async () => {
    expect((await server.app.inject({ method: 'GET', url: '/v1/connectors', headers: auth(userKey) })).statusCode).toBe(
      200,
    );
    const refused = [
      await deploy(userKey),
      await server.app.inject({
        method: 'POST',
        url: '/v1/connectors/orders-get/versions/1/disable',
        headers: auth(userKey),
      }),
      await server.app.inject({ method: 'GET', url: '/v1/secrets', headers: auth(userKey) }),
      await server.app.inject({ method: 'POST', url: '/v1/keys', headers: auth(userKey), payload: { role: 'admin' } }),
    ];
    for (const res of refused) expect([res.statusCode, res.json().code]).toEqual([403, 'api:auth:forbidden']);
    const versions = await server.app.inject({
      method: 'GET',
      url: '/v1/connectors/orders-get/versions',
      headers: auth(userKey),
    });
    expect(versions.json()).toEqual([expect.objectContaining({ version: 1, enabled: true })]);
  });

  it('only the admin keys of default may create namespaces', async () => {
    const res = await server.app.inject({
      method: 'POST',
      url: '/v1/namespaces',
      headers: auth(otherAdmin),
      payload: { name: 'team-c' },
    });
    expect([res.statusCode, res.json().code]).toEqual([403, 'api:auth:forbidden']);
    const twice = await server.app.inject({
      method: 'POST',
      url: '/v1/namespaces',
      headers: auth(server.adminKey),
      payload: { name: 'team-b' },
    });
    expect([twice.statusCode, twice.json().code]).toEqual([409, 'api:namespaces:exists']);
  });

  it('a deleted key stops working at once', async () => {
    const created = await server.app.inject({
      method: 'POST',
      url: '/v1/keys',
      headers: auth(server.adminKey),
      payload: { role: 'user' },
    });
    const { id, key } = created.json();
    const listed = await server.app.inject({ method: 'GET', url: '/v1/keys', headers: auth(server.adminKey) });
    expect(listed.json().map((k: { id: string }) => k.id)).toContain(id);
    expect(JSON.stringify(listed.json())).not.toContain(key);
    const del = await server.app.inject({ method: 'DELETE', url: `/v1/keys/${id}`, headers: auth(server.adminKey) });
    expect(del.statusCode).toBe(204);
    const after = await server.app.inject({ method: 'GET', url: '/v1/connectors', headers: auth(key) });
    expect([after.statusCode, after.json().code]).toEqual([401, 'api:auth:invalid-key']);
  });
});

describe('namespaces', () => {
  it('a key of namespace B sees none of namespace A and cannot change it (404)', async () => {
    const list = await server.app.inject({ method: 'GET', url: '/v1/connectors', headers: auth(otherAdmin) });
    expect(list.json()).toEqual([]);
    const reads = ['/v1/connectors/orders-get', '/v1/extops/get-order', '/v1/extops/get-order/versions'];
    for (const url of reads) {
      const res = await server.app.inject({ method: 'GET', url, headers: auth(otherAdmin) });
      expect(res.statusCode, url).toBe(404);
    }
    const disable = await server.app.inject({
      method: 'POST',
      url: '/v1/connectors/orders-get/versions/1/disable',
      headers: auth(otherAdmin),
    });
    expect([disable.statusCode, disable.json().code]).toEqual([404, 'api:connectors:not-found']);
    const secrets = await server.app.inject({ method: 'GET', url: '/v1/secrets', headers: auth(server.adminKey) });
    const secretId = secrets.json()[0].id;
    const rotate = await server.app.inject({
      method: 'PUT',
      url: `/v1/secrets/${secretId}`,
      headers: auth(otherAdmin),
      payload: { value: 'stolen' },
    });
    expect([rotate.statusCode, rotate.json().code]).toEqual([404, 'api:secrets:not-found']);
    const keys = await server.app.inject({ method: 'GET', url: '/v1/keys', headers: auth(server.adminKey) });
    const keyId = keys.json()[0].id;
    const delKey = await server.app.inject({ method: 'DELETE', url: `/v1/keys/${keyId}`, headers: auth(otherAdmin) });
    expect([delKey.statusCode, delKey.json().code]).toEqual([404, 'api:keys:not-found']);
    const still = await server.app.inject({ method: 'GET', url: '/v1/connectors/orders-get', headers: auth(userKey) });
    expect(still.json()).toMatchObject({ version: 1, enabled: true });
  });

  it('deploys the same repo to namespace B as its own version 1, checked against B secrets', async () => {
    const refused = await deploy(otherAdmin);
    expect(refused.statusCode).toBe(422);
    expect(refused.json().diagnostics.map((d: { code: string }) => d.code)).toContain('api:secrets:not-found');
    await server.app.inject({
      method: 'POST',
      url: '/v1/secrets',
      headers: auth(otherAdmin),
      payload: { name: 'orders-key', value: 'team-b-orders-key' },
    });
    const ok = await deploy(otherAdmin);
    expect(ok.statusCode).toBe(200);
    expect(ok.json().changes.map((c: { action: string; version: number }) => [c.action, c.version])).toEqual(
      Array(7).fill(['create', 1]),
    );
  });
});
