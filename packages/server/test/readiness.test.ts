import { createPgDb, type Db } from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEARTBEAT_LATE_MS, type ReadinessInputs, readiness, WORKER_STALL_MS } from '../src/routes/health.js';
import { startWorkerHealth } from '../src/server/worker-health.js';

// Readiness's reasons besides the database (docs/operations.md, "Readiness and liveness"; issue #48 test 10): a worker
// whose fetch loop has not turned, whose held runs' heartbeat fails, or (mt worker) whose every slot waits on an old
// call is unready, on a real database that answers. The database's own outages are test/e2e/health-outage.test.ts's,
// stuck slots and shutdown with real processes test/e2e/shutdown-grace.test.ts's.
let database: TestDatabase;
let db: Db;

beforeAll(async () => {
  database = await createTestDatabase('mt_server_readiness');
  db = createPgDb(database.url);
});

afterAll(async () => {
  await db?.close();
  await database?.drop();
});

const inputs = (worker: ReadinessInputs['worker'], more: Partial<ReadinessInputs> = {}): ReadinessInputs => ({
  db,
  listening: true,
  cache: { mode: 'live' },
  worker,
  shuttingDown: false,
  ...more,
});

describe('readiness', () => {
  it('is ok with a worker whose loop turns and whose heartbeat goes through', async () => {
    expect(await readiness(inputs({ sinceTurnMs: 100, heartbeatLateMs: 0 }))).toMatchObject({ status: 'ok' });
    // No worker (an API-only server), or one that has not started its loop yet.
    expect(await readiness(inputs(null))).toMatchObject({ status: 'ok' });
    expect(await readiness(inputs({ sinceTurnMs: null, heartbeatLateMs: 0 }))).toMatchObject({ status: 'ok' });
  });

  it('says the fetch loop has not turned past WORKER_STALL_MS, and the heartbeat failing past HEARTBEAT_LATE_MS', async () => {
    expect(await readiness(inputs({ sinceTurnMs: WORKER_STALL_MS, heartbeatLateMs: 0 }))).toMatchObject({
      status: 'ok',
    });
    expect(await readiness(inputs({ sinceTurnMs: WORKER_STALL_MS + 1, heartbeatLateMs: 0 }))).toEqual({
      status: 'degraded',
      database: 'ok',
      reason: `the worker's fetch loop has not turned for ${WORKER_STALL_MS + 1} ms`,
      wakeups: { listening: true },
      cache: { mode: 'live' },
    });
    expect(await readiness(inputs({ sinceTurnMs: 10, heartbeatLateMs: HEARTBEAT_LATE_MS + 1 }))).toMatchObject({
      status: 'degraded',
      database: 'ok',
      reason: `the held runs' heartbeat has failed for ${HEARTBEAT_LATE_MS + 1} ms`,
    });
  });

  it('counts stuck slots only for mt worker (a stuck-call bound given), and only when every slot is stuck', async () => {
    const stuck = { sinceTurnMs: 10, heartbeatLateMs: 0, slots: 2, callAgesMs: [5000, 4000] };
    expect(await readiness(inputs(stuck))).toMatchObject({ status: 'ok' });
    expect(await readiness(inputs(stuck, { stuckMs: 3000 }))).toMatchObject({
      status: 'degraded',
      reason: 'all 2 slots have waited on a call for over 3000 ms',
    });
    expect(await readiness(inputs({ ...stuck, callAgesMs: [5000, 100] }, { stuckMs: 3000 }))).toMatchObject({
      status: 'ok',
    });
  });

  it("mt worker's health port: /health/ready 503 with the reason while the loop stalls, /health/live 200", async () => {
    let sinceTurnMs = 100;
    const port = await startWorkerHealth({ host: '127.0.0.1', port: 0 }, () =>
      inputs({ sinceTurnMs, heartbeatLateMs: 0, slots: 1, callAgesMs: [] }, { stuckMs: 60_000 }),
    );
    try {
      const get = async (path: string) => {
        const res = await fetch(`${port.url}${path}`, { signal: AbortSignal.timeout(5000) });
        return { status: res.status, body: (await res.json()) as { reason?: string } };
      };
      expect((await get('/health/ready')).status).toBe(200);
      sinceTurnMs = WORKER_STALL_MS + 500;
      const ready = await get('/health/ready');
      expect([ready.status, ready.body.reason]).toEqual([
        503,
        `the worker's fetch loop has not turned for ${WORKER_STALL_MS + 500} ms`,
      ]);
      expect((await get('/health')).status).toBe(503);
      expect((await get('/health/live')).status).toBe(200);
      sinceTurnMs = 100;
      expect((await get('/health/ready')).status).toBe(200);
    } finally {
      await port.close();
    }
  });
});
