import { randomBytes } from 'node:crypto';
import { TEST_SERVER_URL } from '@maitento/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from './helpers/api.js';
import { ORDERS_SECRET, type RunsStack, startRunsStack } from './helpers/stack.js';

// Three real `mt serve` processes on one PostgreSQL database, each with its own caches: a change made through one
// is found by the others on the next request sent after its answer (each reads the cache epoch first,
// docs/decisions.md), also by a server whose process was stopped while the change was made; no write waits for
// another process, and no database role can join anything.
let stack: RunsStack;

beforeAll(async () => {
  stack = await startRunsStack({ servers: 3 });
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

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

describe('changes through one mt serve, seen by the others at once', { timeout: 60_000 }, () => {
  it('a key deleted, a secret rotated and a tool disabled through one server take effect on the next call of the others', async () => {
    const [a, b, c] = stack.servers.map((s) => s.url);
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

  it('a role naming a connection like a cache member neither holds a write nor makes one answer before a stopped server has it', async () => {
    const [a, , c] = stack.servers;
    const key = await newKey();
    expect((await call(c.url, key.key, 'S-1')).status).toBe(200);
    // An unprivileged role of the same PostgreSQL server, connected as `mt-cache:forger` (the name the old settle
    // protocol counted members by): it acknowledges every barrier for every other member, never for itself.
    const role = `mt_forger_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: TEST_SERVER_URL });
    await admin.connect();
    await admin.query(`CREATE ROLE ${role} LOGIN`);
    const url = new URL(stack.db!.url);
    url.username = role;
    url.password = '';
    const forger = new pg.Client({ connectionString: url.toString(), application_name: 'mt-cache:forger' });
    await forger.connect();
    forger.on('notification', async (message) => {
      const barrier = JSON.parse(message.payload ?? '{}').barrier;
      if (typeof barrier !== 'string') return;
      const { rows } = await forger.query(
        "SELECT substr(application_name, 10) AS member FROM pg_stat_activity WHERE application_name LIKE 'mt-cache:%'",
      );
      for (const { member } of rows) {
        if (member === 'forger') continue;
        await forger.query('SELECT pg_notify($1, $2)', ['mt_cache_settle', JSON.stringify({ ack: barrier, member })]);
      }
    });
    await forger.query('LISTEN mt_cache_settle');
    let waited: number;
    c.child.kill('SIGSTOP');
    try {
      const began = performance.now();
      expect((await api(a.url, stack.adminKey).request('DELETE', `/v1/keys/${key.id}`)).status).toBe(204);
      waited = performance.now() - began;
    } finally {
      c.child.kill('SIGCONT');
      await forger.end();
      await admin.query(`DROP ROLE ${role}`);
      await admin.end();
    }
    // Neither the stopped server nor the forger is waited for: no write waits for any other process.
    expect(waited).toBeLessThan(800);
    // The stopped server reads the cache epoch before its first request after it resumes.
    const refused = await call(c.url, key.key, 'S-2');
    expect([refused.status, refused.body.code]).toEqual([401, 'api:auth:invalid-key']);
  });
});
