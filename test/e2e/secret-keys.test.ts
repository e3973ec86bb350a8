import { randomBytes } from 'node:crypto';
import { createPgDb, masterKeyId } from '@maitento/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from './helpers/api.js';
import { startServe, startWorker } from './helpers/processes.js';
import { ORDERS_SECRET, type RunsStack, startRunsStack } from './helpers/stack.js';
import { runMt } from './support/harness.js';

// The master key over time, with the real `mt serve` on PostgreSQL: a server refuses to start without the key its
// secrets are under, a rotation re-wraps them while calls go on, and the old key is then retired.
let stack: RunsStack;
const oldKey = randomBytes(32);
const newKey = randomBytes(32);

beforeAll(async () => {
  stack = await startRunsStack({ env: { MT_SECRET_KEY: oldKey.toString('hex') } });
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

async function keyIds(): Promise<Record<string, number>> {
  const db = createPgDb(stack.db!.url);
  try {
    const { rows } = await db.query<{ key_id: string; n: number }>(
      'SELECT key_id, count(*)::int AS n FROM mt_secrets GROUP BY key_id',
    );
    return Object.fromEntries(rows.map((r) => [r.key_id, r.n]));
  } finally {
    await db.close();
  }
}

// One get-order call through `url`; returns the X-Api-Key the upstream received.
async function callGetOrder(url: string, orderId: string): Promise<string | undefined> {
  const answer = await api(url, stack.adminKey).request('POST', '/v1/extops/get-order/call', {
    arguments: { additionalInputs: { 'path.orderId': orderId } },
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  const seen = stack.upstream.requests.filter((r) => r.url === `/orders/${orderId}`);
  expect(seen).toHaveLength(1);
  return seen[0].headers['x-api-key'] as string | undefined;
}

async function restart(env: Record<string, string | undefined>) {
  await Promise.all(stack.servers.splice(0).map((s) => s.stop()));
  const server = await startServe(stack.home, { ...stack.env, ...env } as Record<string, string>);
  stack.servers.push(server);
  return server;
}

describe('the master key over time, through mt serve', { timeout: 90_000 }, () => {
  it('refuses to start without the key the secrets are under, rotates while calls go on, then runs on the new key alone', async () => {
    expect(await callGetOrder(stack.servers[0].url, 'K-100')).toBe(ORDERS_SECRET);
    expect(await keyIds()).toEqual({ [masterKeyId(oldKey)]: 1 });

    // The new key alone: the server says which key id it lacks and does not start.
    await Promise.all(stack.servers.splice(0).map((s) => s.stop()));
    const refused = await startServe(stack.home, { ...stack.env, MT_SECRET_KEY: newKey.toString('hex') }).catch(
      (e: Error) => e,
    );
    expect(refused).toBeInstanceOf(Error);
    expect(String(refused)).toContain('api:secrets:key-id-missing');
    expect(String(refused)).toContain(
      `Stored secrets are encrypted under master key ${masterKeyId(oldKey)}, which this server was not given (it has ${masterKeyId(newKey)})`,
    );
    expect(String(refused)).not.toContain(ORDERS_SECRET);
    // So does a worker.
    const worker = await startWorker(stack.home, { ...stack.env, MT_SECRET_KEY: newKey.toString('hex') }).catch(
      (e: Error) => e,
    );
    expect(String(worker)).toContain('api:secrets:key-id-missing');

    // New key with the old one as MT_SECRET_KEY_PREVIOUS: it starts, and the secret under the old key is sent.
    const during = await restart({
      MT_SECRET_KEY: newKey.toString('hex'),
      MT_SECRET_KEY_PREVIOUS: oldKey.toString('hex'),
    });
    expect(during.log()).toContain(`Secrets are still under previous master keys ${masterKeyId(oldKey)}`);
    expect(await callGetOrder(during.url, 'K-101')).toBe(ORDERS_SECRET);
    // A secret made now is wrapped under the new key at once.
    const made = await api(during.url, stack.adminKey).request('POST', '/v1/secrets', { name: 'later', value: 'x-1' });
    expect(made.status).toBe(201);
    expect(await keyIds()).toEqual({ [masterKeyId(oldKey)]: 1, [masterKeyId(newKey)]: 1 });

    // Only the operator may rotate: a user key of the same namespace is refused.
    const userKey = await api(during.url, stack.adminKey).request('POST', '/v1/keys', { name: 'reader', role: 'user' });
    expect(userKey.status, JSON.stringify(userKey.body)).toBe(201);
    const forbidden = await api(during.url, userKey.body.key).request('POST', '/v1/admin/secret-key/rotate');
    expect([forbidden.status, forbidden.body.code]).toEqual([403, 'api:auth:forbidden']);
    // So is an admin key of another namespace: the operator is an admin key of `default` only.
    const team = await api(during.url, stack.adminKey).request('POST', '/v1/namespaces', { name: 'team-rotate' });
    expect(team.status, JSON.stringify(team.body)).toBe(201);
    const teamAdmin = api(during.url, team.body.key.key);
    expect((await teamAdmin.request('GET', '/v1/secrets')).status).toBe(200);
    const notOperator = await teamAdmin.request('POST', '/v1/admin/secret-key/rotate', {});
    expect([notOperator.status, notOperator.body.code]).toEqual([403, 'api:auth:forbidden']);
    const notOperatorStatus = await teamAdmin.request('GET', '/v1/admin/secret-key');
    expect([notOperatorStatus.status, notOperatorStatus.body.code]).toEqual([403, 'api:auth:forbidden']);
    expect(await keyIds()).toEqual({ [masterKeyId(oldKey)]: 1, [masterKeyId(newKey)]: 1 });

    const env = { MT_API_URL: during.url, MT_API_KEY: stack.adminKey };
    const status = await runMt(['secret-key-rotate', '--status'], { home: stack.home, env });
    expect(status.stdout).toContain(`current master key: ${masterKeyId(newKey)}`);
    expect(status.stdout).toContain(`${masterKeyId(oldKey)}: 1 secrets`);
    const rotated = await runMt(['secret-key-rotate', '--json', '--batch-size', '1'], { home: stack.home, env });
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(JSON.parse(rotated.stdout)).toEqual({
      keyId: masterKeyId(newKey),
      rewrapped: 1,
      converted: 0,
      batches: 1,
      status: {
        currentKeyId: masterKeyId(newKey),
        secretsByKeyId: { [masterKeyId(newKey)]: 2 },
        unusedPreviousKeyIds: [masterKeyId(oldKey)],
      },
    });
    expect(await keyIds()).toEqual({ [masterKeyId(newKey)]: 2 });
    expect(await callGetOrder(during.url, 'K-102')).toBe(ORDERS_SECRET);
    // Again: nothing left to do.
    const again = await runMt(['secret-key-rotate'], { home: stack.home, env });
    expect(again.stderr).toContain(`re-wrapped 0 data keys under master key ${masterKeyId(newKey)}`);

    // The old key retired: the new key alone starts and calls.
    const after = await restart({ MT_SECRET_KEY: newKey.toString('hex') });
    expect(await callGetOrder(after.url, 'K-103')).toBe(ORDERS_SECRET);
  });
});
