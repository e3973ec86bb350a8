import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { createTestDatabase, startTcpProxy, type TcpProxy, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServe } from './helpers/processes.js';
import { requireBuiltCli, tempHome } from './support/harness.js';

// A real `mt serve` whose every connection to PostgreSQL goes through a TCP proxy that stops forwarding (a stalled
// network or database): each request is answered within 2 s (503 api:store:unavailable, GET /health `degraded`),
// the log says so once and once again when the database answers, and the server works again after.
let database: TestDatabase;
let proxy: TcpProxy;
let home: string;
let server: ServeProcess;
const adminKey = `mt_e2e_${randomBytes(18).toString('hex')}`;

beforeAll(async () => {
  requireBuiltCli();
  database = await createTestDatabase('mt_e2e_stall');
  proxy = await startTcpProxy();
  home = await tempHome();
  server = await startServe(home, {
    DATABASE_URL: proxy.via(database.url),
    MT_SECRET_KEY: randomBytes(32).toString('hex'),
    MT_BOOTSTRAP_KEY: adminKey,
  });
}, 90_000);

afterAll(async () => {
  proxy?.thaw();
  await server?.stop();
  await proxy?.close();
  await database?.drop();
  if (home) await rm(home, { recursive: true, force: true });
});

/** Sends one request; its status, body and how long the answer took (aborted, and failed, after 10 s). */
async function timed(method: string, path: string, body?: unknown) {
  const began = performance.now();
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${adminKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  return { path, status: res.status, body: text === '' ? undefined : JSON.parse(text), ms: performance.now() - began };
}

const count = (pattern: RegExp) =>
  server
    .log()
    .split('\n')
    .filter((line) => pattern.test(line)).length;

describe('mt serve with its database stalled', { timeout: 60_000 }, () => {
  it('answers every request within 2 s, says degraded on /health and in its log once, and recovers', async () => {
    const created = await timed('POST', '/v1/keys', { role: 'user', name: 'before' });
    expect(created.status).toBe(201);
    expect((await timed('GET', '/health')).status).toBe(200);

    proxy.freeze();
    try {
      const requests = (): Promise<Awaited<ReturnType<typeof timed>>[]> =>
        Promise.all([
          timed('GET', '/v1/keys'),
          timed('POST', '/v1/keys', { role: 'user', name: 'during' }),
          timed('DELETE', `/v1/keys/${created.body.id}`),
          timed('GET', '/v1/secrets'),
          timed('POST', '/v1/extops/get-order/call', { arguments: {} }),
          timed('GET', '/v1/runs'),
        ]);
      // Two rounds: the first finds the pool's connections stalled, the second opens new ones that stall.
      for (const round of [await requests(), await requests()]) {
        for (const answer of round) {
          // A statement sent on a connection that went silent got no answer: what it did is unknown (a write may have
          // committed), api:store:outcome-unknown; one that got no connection did nothing, api:store:unavailable.
          expect([answer.path, answer.status]).toEqual([answer.path, 503]);
          expect(['api:store:unavailable', 'api:store:outcome-unknown']).toContain(answer.body?.code);
          expect(answer.ms).toBeLessThan(2000);
        }
      }
      const health = await timed('GET', '/health');
      expect(health.status).toBe(503);
      expect(health.body).toMatchObject({ status: 'degraded', database: 'unreachable' });
      expect(health.ms).toBeLessThan(2000);
    } finally {
      proxy.thaw();
    }

    const deadline = Date.now() + 15_000;
    while ((await timed('GET', '/health')).status !== 200) {
      if (Date.now() > deadline) throw new Error(`GET /health did not answer 200 again:\n${server.log()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // The key deleted while nothing answered is still there; the server works as before.
    const keys = await timed('GET', '/v1/keys');
    expect(keys.status).toBe(200);
    expect(keys.body.map((k: { id: string }) => k.id)).toContain(created.body.id);
    expect((await timed('DELETE', `/v1/keys/${created.body.id}`)).status).toBe(204);
    expect(count(/the database is unreachable/)).toBe(1);
    expect(count(/the database answers again/)).toBe(1);
  });
});
