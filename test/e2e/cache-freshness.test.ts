import { randomBytes } from 'node:crypto';
import { TEST_SERVER_URL } from '@maitento/testkit';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { api } from './helpers/api.js';
import { startServe } from './helpers/processes.js';
import { ORDERS_SECRET, useRunsStack } from './helpers/stack.js';

// Three real `mt serve` processes on one PostgreSQL database, each with its own caches under the bounded cache lease
// (docs/decisions/0009-how-a-change-reaches-every-servers-cache.md): a change made through one is found by the others on the next request sent after its answer,
// with no epoch read while their lease holds (the write waits for their acknowledgement), also by a server whose
// process was stopped or killed while the change was made (the write waits at most for its lease to end, < 2 s);
// no other database role can join the lease, acknowledge for a member or hold a write.
const stack = useRunsStack({ servers: 3 }, { timeoutMs: 120_000 });

const orderArgs = (orderId: string) => ({ arguments: { additionalInputs: { 'path.orderId': orderId } } });

async function call(url: string, key: string, orderId: string) {
  return api(url, key).request('POST', '/v1/extops/get-order/call', orderArgs(orderId));
}

/** The X-Api-Key the upstream received for `orderId`'s one call. */
function sentKey(orderId: string): unknown {
  const seen = stack.upstream.requests.filter((r) => r.url === `/orders/${orderId}`);
  expect(seen).toHaveLength(1);
  return seen[0].headers['x-api-key'];
}

async function newKey(): Promise<{ id: string; key: string }> {
  const created = await stack.api.request('POST', '/v1/keys', { role: 'admin', name: `k-${Date.now()}` });
  expect(created.status).toBe(201);
  return created.body;
}

/** The cache mode `GET /health` of `url` says. */
async function cacheMode(url: string): Promise<string> {
  const health = await fetch(`${url}/health`);
  return ((await health.json()) as { cache: { mode: string } }).cache.mode;
}

/**
 * Waits until `url`'s cache is live. A server whose cache no request read for 4 leases ends its lease (idle,
 * read-through: docs/architecture.md "Timers"), so each round sends it a request that reads its cache.
 */
async function untilLive(url: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await cacheMode(url)) !== 'live') {
    if (Date.now() > deadline) throw new Error(`${url} is not live within 10 s`);
    await api(url, stack.adminKey).request('GET', '/v1/keys');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('changes through one mt serve, seen by the others at once', { timeout: 90_000 }, () => {
  it('a key deleted, a secret rotated and a tool disabled through one server take effect on the next call of the others', async () => {
    const [a, b, c] = stack.servers.map((s) => s.url);
    for (const url of [a, b, c]) await untilLive(url);
    const key = await newKey();
    // Cached by B and C first.
    expect((await call(b, key.key, 'F-1')).status).toBe(200);
    expect((await call(c, key.key, 'F-2')).status).toBe(200);
    expect((await api(a, stack.adminKey).request('DELETE', `/v1/keys/${key.id}`)).status).toBe(204);
    for (const [url, id] of [
      [b, 'F-3'],
      [c, 'F-4'],
    ]) {
      const refused = await call(url, key.key, id);
      expect([refused.status, refused.body.code]).toEqual([401, 'api:auth:invalid-key']);
    }

    expect((await call(a, stack.adminKey, 'F-5')).status).toBe(200);
    expect(sentKey('F-5')).toBe(ORDERS_SECRET);
    const secrets = await stack.api.request('GET', '/v1/secrets');
    const secretId = secrets.body.find((s: { name: string }) => s.name === 'orders-api-key').id;
    const rotated = 'sk-orders-rotated-e2e-77aa';
    expect((await api(b, stack.adminKey).request('PUT', `/v1/secrets/${secretId}`, { value: rotated })).status).toBe(
      200,
    );
    expect((await call(a, stack.adminKey, 'F-6')).status).toBe(200);
    expect(sentKey('F-6')).toBe(rotated);

    const tool = await stack.api.request('GET', '/v1/extops/get-order');
    const version = tool.body.version;
    expect((await call(c, stack.adminKey, 'F-7')).status).toBe(200);
    const disable = `/v1/extops/get-order/versions/${version}/disable`;
    expect((await api(a, stack.adminKey).request('POST', disable)).status).toBe(200);
    const disabled = await call(c, stack.adminKey, 'F-8');
    expect([disabled.status, disabled.body.code]).toEqual([409, 'api:extops:version-disabled']);
    const enable = `/v1/extops/get-order/versions/${version}/enable`;
    expect((await api(b, stack.adminKey).request('POST', enable)).status).toBe(200);
    expect((await call(c, stack.adminKey, 'F-9')).status).toBe(200);
  });

  it('twenty rounds: the next request on another live server, sent after the write answered, sees it', async () => {
    const [a, b] = stack.servers.map((s) => s.url);
    const secrets = await stack.api.request('GET', '/v1/secrets');
    const secretId = secrets.body.find((s: { name: string }) => s.name === 'orders-api-key').id;
    const tool = await stack.api.request('GET', '/v1/extops/get-order');
    const versionPath = `/v1/extops/get-order/versions/${tool.body.version}`;
    for (let i = 0; i < 20; i++) {
      await untilLive(b);
      const key = await newKey();
      expect((await call(b, key.key, `R-${i}-1`)).status).toBe(200);
      expect((await api(a, stack.adminKey).request('DELETE', `/v1/keys/${key.id}`)).status).toBe(204);
      const refused = await call(b, key.key, `R-${i}-2`);
      expect([refused.status, refused.body.code]).toEqual([401, 'api:auth:invalid-key']);

      const value = `sk-orders-round-${i}`;
      expect((await api(a, stack.adminKey).request('PUT', `/v1/secrets/${secretId}`, { value })).status).toBe(200);
      expect((await call(b, stack.adminKey, `R-${i}-3`)).status).toBe(200);
      expect(sentKey(`R-${i}-3`)).toBe(value);

      expect((await api(a, stack.adminKey).request('POST', `${versionPath}/disable`)).status).toBe(200);
      const disabled = await call(b, stack.adminKey, `R-${i}-4`);
      expect([disabled.status, disabled.body.code]).toEqual([409, 'api:extops:version-disabled']);
      expect((await api(a, stack.adminKey).request('POST', `${versionPath}/enable`)).status).toBe(200);
      expect((await call(b, stack.adminKey, `R-${i}-5`)).status).toBe(200);
    }
  });

  it('a stopped server holds a write at most its lease, another role can neither join nor release it, and the stopped server reads through after', async () => {
    const [a, , c] = stack.servers;
    await untilLive(c.url);
    const key = await newKey();
    expect((await call(c.url, key.key, 'S-1')).status).toBe(200);
    // An unprivileged role of the same PostgreSQL server: it may not touch the members table, and it notifies
    // `cache-ack` (and anything else) on the wake-up channel all the time.
    const role = `mt_forger_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: TEST_SERVER_URL });
    await admin.connect();
    await admin.query(`CREATE ROLE ${role} LOGIN`);
    const url = new URL(stack.db!.url);
    url.username = role;
    url.password = '';
    const forger = new pg.Client({ connectionString: url.toString() });
    await forger.connect();
    const owner = new pg.Client({ connectionString: stack.db!.url });
    await owner.connect();
    let waited: number;
    let lagging: { ended: boolean }[];
    c.child.kill('SIGSTOP');
    let sending = false;
    const noise = setInterval(() => {
      if (sending) return;
      sending = true;
      void forger
        .query("SELECT pg_notify('mt_wake', p) FROM unnest($1::text[]) p", [['cache-ack', 'cache', '{"ack":1e9}']])
        .catch(() => {})
        .finally(() => {
          sending = false;
        });
    }, 5);
    try {
      await expect(
        forger.query("INSERT INTO mt_cache_members VALUES (gen_random_uuid(), 0, now() + interval '1 hour', 3600000)"),
      ).rejects.toMatchObject({ code: '42501' });
      await expect(forger.query('UPDATE mt_cache_members SET acked = 1000000000')).rejects.toMatchObject({
        code: '42501',
      });
      const began = performance.now();
      expect((await api(a.url, stack.adminKey).request('DELETE', `/v1/keys/${key.id}`)).status).toBe(204);
      waited = performance.now() - began;
      ({ rows: lagging } = await owner.query(
        'SELECT lease_until <= now() AS ended FROM mt_cache_members m, mt_cache_epoch e WHERE m.acked < e.epoch',
      ));
    } finally {
      clearInterval(noise);
      c.child.kill('SIGCONT');
      await forger.end();
      await owner.end();
      await admin.query(`DROP ROLE ${role}`);
      await admin.end();
    }
    // The write answered once the stopped server's lease had ended (it lags, and its lease is over), within 2 s.
    expect(waited).toBeLessThan(2000);
    expect(lagging.length).toBeGreaterThan(0);
    expect(lagging.every((r) => r.ended)).toBe(true);
    // The stopped server's lease ended while it was stopped: it reads the epoch before its first request.
    const refused = await call(c.url, key.key, 'S-2');
    expect([refused.status, refused.body.code]).toEqual([401, 'api:auth:invalid-key']);
    await untilLive(c.url);
  });

  it('a killed server holds a write less than 2 s', async () => {
    const [a] = stack.servers;
    const extra = await startServe(stack.home, stack.env);
    try {
      await untilLive(extra.url);
      const key = await newKey();
      expect((await call(extra.url, key.key, 'K-1')).status).toBe(200);
      extra.child.kill('SIGKILL');
      const began = performance.now();
      expect((await api(a.url, stack.adminKey).request('DELETE', `/v1/keys/${key.id}`)).status).toBe(204);
      expect(performance.now() - began).toBeLessThan(2000);
    } finally {
      await extra.stop();
    }
  });
});
