// Two servers on one PostgreSQL database, each with its own pool and its own caches, reached over real HTTP
// as clients reach them: a change made through one is seen by the other on its next request (the write waits for
// the other's cache lease, docs/decisions/0009-how-a-change-reaches-every-servers-cache.md); and a third whose LISTEN connection stalls behind a TCP proxy.
import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEgressPolicy } from '@maitento/egress';
import { createServer } from '@maitento/server';
import { createPgDb, createStoreCache, type Db, type StoreCache } from '@maitento/store';
import { createTestDatabase, startTcpProxy, type TestDatabase } from '@maitento/testkit';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localResolver, sampleFiles } from './helpers.js';

const FIRST_VALUE = 'sk-orders-first-1d2c3b';
const ROTATED_VALUE = 'sk-orders-rotated-8e7f6a';
const orderArgs = { additionalInputs: { 'path.orderId': 'A-1001' } };

interface Node {
  app: FastifyInstance;
  db: Db;
  cache: StoreCache;
  url: string;
}

let database: TestDatabase;
let upstream: Server;
let ordersUrl: string;
let a: Node;
let b: Node;
let queries = 0;
let secretKeyOf: Buffer;
const adminKey = `mt_${randomBytes(24).toString('base64url')}`;
const seen: { url: string; headers: IncomingHttpHeaders }[] = [];

/** The same database, with every statement it runs counted. */
function counting(db: Db): Db {
  return {
    ...db,
    query: (text, params) => {
      queries++;
      return db.query(text, params);
    },
    exec: (sql) => {
      queries++;
      return db.exec(sql);
    },
    transaction: (fn) => {
      queries++;
      return db.transaction(fn);
    },
  };
}

async function startNode(
  db: Db,
  secretKey: Buffer,
  more: Partial<Parameters<typeof createServer>[0]> = {},
): Promise<Node> {
  const cache = await createStoreCache(db, { secretKey });
  const app = await createServer({
    ...more,
    db,
    cache,
    secretKey,
    egress: createEgressPolicy({ allow: '127.0.0.1/32' }),
    resolver: localResolver(['orders.example.test']),
    bootstrapKey: adminKey,
    logger: false,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, db, cache, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

async function send(node: Node, method: string, path: string, body?: unknown, key = adminKey) {
  const res = await fetch(`${node.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** Signs in to `node`'s web console with `key` as a browser does (the login form, its CSRF cookie, its Origin). */
async function consoleSession(node: Node, key = adminKey): Promise<{ cookie: string; csrf: string }> {
  const hidden = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
  const cookieOf = (res: Response) =>
    res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
  const login = await fetch(`${node.url}/console/login`);
  const form = new URLSearchParams({ _csrf: hidden(await login.text()), key });
  const signedIn = await fetch(`${node.url}/console/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: cookieOf(login), origin: node.url, 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
  });
  expect(signedIn.status).toBe(303);
  const cookie = cookieOf(signedIn);
  const page = await fetch(`${node.url}/console/resources`, { headers: { cookie } });
  expect(page.status).toBe(200);
  return { cookie, csrf: hidden(await page.text()) };
}

const callOrder = (node: Node, key = adminKey) =>
  send(node, 'POST', '/v1/extops/get-order/call', { arguments: orderArgs }, key);

beforeAll(async () => {
  upstream = createHttpServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ id: 'A-1001', status: 'shipped' }));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  ordersUrl = `http://orders.example.test:${(upstream.address() as AddressInfo).port}`;
  database = await createTestDatabase('mt_caches', { migrated: true });
  const secretKey = randomBytes(32);
  secretKeyOf = secretKey;
  a = await startNode(counting(createPgDb(database.url)), secretKey);
  b = await startNode(createPgDb(database.url), secretKey);
  expect((await send(a, 'POST', '/v1/secrets', { name: 'orders-key', value: FIRST_VALUE })).status).toBe(201);
  const deployed = await send(a, 'POST', '/v1/deploy', {
    files: sampleFiles({ ordersUrl: `${ordersUrl}/orders/{orderId}` }),
  });
  expect(deployed.status).toBe(200);
});

afterAll(async () => {
  for (const node of [a, b]) {
    await node?.app.close();
    await node?.cache.close();
    await node?.db.close();
  }
  await database?.drop();
  await new Promise((resolve) => upstream?.close(resolve));
});

describe('the call path caches', () => {
  it('makes no round trip to the database for a call when nothing changed while its cache lease holds', async () => {
    expect((await callOrder(a)).body).toMatchObject({ ok: true, status: 200 });
    const deadline = Date.now() + 5000;
    while (!a.cache.live && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect((await send(a, 'GET', '/health')).body.cache).toEqual({ mode: 'live' });
    queries = 0;
    const syncs = a.cache.syncs;
    for (let i = 0; i < 5; i++) expect((await callOrder(a)).body.ok).toBe(true);
    // No epoch read, no statement on the pool at all (the lease renews on the wake-up connection).
    expect(queries).toBe(0);
    expect(a.cache.syncs - syncs).toBe(0);
    expect(seen.at(-1)?.headers['x-api-key']).toBe(FIRST_VALUE);
  });

  it('a deploy through one server moves the other to the new latest version at once', async () => {
    await callOrder(b);
    expect(seen.at(-1)?.url).toBe('/orders/A-1001');
    const redeploy = await send(a, 'POST', '/v1/deploy', {
      files: sampleFiles({ ordersUrl: `${ordersUrl}/v2/orders/{orderId}` }),
    });
    expect(redeploy.body.changes).toContainEqual(expect.objectContaining({ name: 'get-order', version: 2 }));
    expect((await callOrder(b)).body.ok).toBe(true);
    expect(seen.at(-1)?.url).toBe('/v2/orders/A-1001');
  });

  it('a disable and an enable through one server are seen by the other at once', async () => {
    await callOrder(b);
    expect((await send(a, 'POST', '/v1/extops/get-order/versions/2/disable')).status).toBe(200);
    const refused = await callOrder(b);
    expect([refused.status, refused.body.code]).toEqual([409, 'api:extops:version-disabled']);
    expect((await send(a, 'POST', '/v1/extops/get-order/versions/2/enable')).status).toBe(200);
    expect((await callOrder(b)).body.ok).toBe(true);

    expect((await send(b, 'POST', '/v1/connectors/orders-get/versions/2/disable')).status).toBe(200);
    const connector = await callOrder(a);
    expect([connector.status, connector.body.code]).toEqual([409, 'api:connectors:version-disabled']);
    expect((await send(b, 'POST', '/v1/connectors/orders-get/versions/2/enable')).status).toBe(200);
    expect((await callOrder(a)).body.ok).toBe(true);
  });

  it('a key deleted through one server is refused by the other at once', async () => {
    const created = await send(a, 'POST', '/v1/keys', { role: 'admin', name: 'short-lived' });
    expect(created.status).toBe(201);
    expect((await callOrder(b, created.body.key)).body.ok).toBe(true);
    expect((await send(a, 'DELETE', `/v1/keys/${created.body.id}`)).status).toBe(204);
    const refused = await callOrder(b, created.body.key);
    expect([refused.status, refused.body.code]).toEqual([401, 'api:auth:invalid-key']);
  });

  it('a secret rotated or deleted through one server is used or missed by the other on its next call', async () => {
    await callOrder(b);
    expect(seen.at(-1)?.headers['x-api-key']).toBe(FIRST_VALUE);
    const secrets = await send(a, 'GET', '/v1/secrets');
    const id = secrets.body.find((s: { name: string }) => s.name === 'orders-key').id;
    expect((await send(a, 'PUT', `/v1/secrets/${id}`, { value: ROTATED_VALUE })).status).toBe(200);
    expect((await callOrder(b)).body.ok).toBe(true);
    expect(seen.at(-1)?.headers['x-api-key']).toBe(ROTATED_VALUE);

    const before = seen.length;
    expect((await send(a, 'DELETE', `/v1/secrets/${id}`)).status).toBe(204);
    const missing = await callOrder(b);
    expect(missing.body).toMatchObject({ ok: false, code: 'api:gateway:secret-not-found' });
    expect(seen.length).toBe(before);
  });

  it('a server whose LISTEN connection stalls reads through within its lease, holds a write less than 2 s, answers right, and is live again after', async () => {
    const proxy = await startTcpProxy();
    const cDb = createPgDb(database.url);
    const c = await startNode(cDb, secretKeyOf, {
      wakeOptions: { url: proxy.via(database.url), deadlineMs: 500, pingMs: 200, retryMs: 100 },
    });
    try {
      const health = async () => (await send(c, 'GET', '/health')).body;
      const until = async (mode: string, ms: number) => {
        const began = performance.now();
        while ((await health()).cache.mode !== mode) {
          if (performance.now() - began > ms) throw new Error(`not ${mode} within ${ms} ms`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        return performance.now() - began;
      };
      await until('live', 5000);
      const created = await send(a, 'POST', '/v1/keys', { role: 'admin', name: 'stalled-test' });
      // (The orders secret was deleted by the test before: a key check and a read stand for the calls here.)
      expect((await send(c, 'GET', '/v1/keys', undefined, created.body.key)).status).toBe(200);

      proxy.freeze();
      // The lease (1 s) was renewed at most 250 ms before: read-through within 0.9 s, said by /health.
      expect(await until('read-through', 2000)).toBeLessThan(1100);
      expect((await health()).cache.reason).toEqual(expect.any(String));
      const began = performance.now();
      expect((await send(a, 'DELETE', `/v1/keys/${created.body.id}`)).status).toBe(204);
      expect(performance.now() - began).toBeLessThan(2000);
      // Reading through: the deleted key is refused, and calls still answer.
      const refused = await send(c, 'GET', '/v1/keys', undefined, created.body.key);
      expect([refused.status, refused.body.code]).toEqual([401, 'api:auth:invalid-key']);
      const syncs = c.cache.syncs;
      expect((await send(c, 'GET', '/v1/extops/get-order')).status).toBe(200);
      expect(c.cache.syncs).toBeGreaterThan(syncs);

      proxy.thaw();
      proxy.cut();
      await until('live', 5000);
    } finally {
      await c.app.close();
      await c.cache.close();
      await cDb.close();
      await proxy.close();
    }
  });
  it("a write answers only once every member has applied it or no longer serves from its cache: the REST route's disable and the console's alike", async () => {
    const proxy = await startTcpProxy();
    const cDb = createPgDb(database.url);
    const c = await startNode(cDb, secretKeyOf, {
      wakeOptions: { url: proxy.via(database.url), deadlineMs: 500, pingMs: 200, retryMs: 100 },
    });
    try {
      const live = async () => {
        const began = performance.now();
        while (!c.cache.live) {
          if (performance.now() - began > 5000) throw new Error('c not live within 5 s');
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      };
      const { version } = (await send(a, 'GET', '/v1/extops/get-order')).body;
      const { cookie, csrf } = await consoleSession(a);
      const viaConsole = (action: string) =>
        fetch(`${a.url}/console/resources/tool/get-order/${version}/${action}`, {
          method: 'POST',
          redirect: 'manual',
          headers: { cookie, origin: a.url, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ _csrf: csrf }).toString(),
        });
      const viaRest = (action: string) => send(a, 'POST', `/v1/extops/get-order/versions/${version}/${action}`);
      for (const [name, write] of [
        ['console disable', async () => expect((await viaConsole('disable')).status).toBe(200)],
        ['REST enable', async () => expect((await viaRest('enable')).status).toBe(200)],
      ] as const) {
        await live();
        // c stops hearing of changes: it cannot apply this write, so the write must wait until c's lease has ended
        // (c then reads through), not answer while c may still serve the old enabled flag from its cache.
        proxy.freeze();
        const began = performance.now();
        await write();
        expect(c.cache.live, `${name} answered while c still served from its cache`).toBe(false);
        expect(performance.now() - began).toBeLessThan(2000);
        proxy.thaw();
        proxy.cut();
      }
      await live();
      // Enabled again, as c sees it (the orders secret is gone since an earlier test, so the call fails after that).
      expect((await callOrder(c)).body.code).toBe('api:gateway:secret-not-found');
    } finally {
      await c.app.close();
      await c.cache.close();
      await cDb.close();
      await proxy.close();
    }
  });
});
