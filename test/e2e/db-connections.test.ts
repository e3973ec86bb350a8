import { TEST_SERVER_URL } from '@maitento/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunsStack, startRunsStack } from './helpers/stack.js';

// How many connections each process holds, as PostgreSQL sees them (pg_stat_activity, by the application_name each
// process gives its connections), idle and under load, with MT_DB_POOL_MAX bounding the store's pool: one `mt
// serve` and one `mt worker`, 40 requests and 20 runs at once. docs/operations.md has the table these figures give.
const POOL_MAX = 3;
let stack: RunsStack;
let observer: pg.Client;

beforeAll(async () => {
  stack = await startRunsStack({ servers: 1, workers: 1, env: { MT_DB_POOL_MAX: String(POOL_MAX) } });
  observer = new pg.Client({ connectionString: TEST_SERVER_URL, application_name: 'mt-test-observer' });
  await observer.connect();
}, 90_000);

afterAll(async () => {
  await observer?.end();
  await stack?.close();
});

/** Connections to the stack's database by application_name. */
async function connections(): Promise<Record<string, number>> {
  const { rows } = await observer.query<{ name: string; n: number }>(
    `SELECT application_name AS name, count(*)::int AS n FROM pg_stat_activity
      WHERE datname = $1 AND pid <> pg_backend_pid() GROUP BY application_name`,
    [stack.db?.name],
  );
  return Object.fromEntries(rows.map((row) => [row.name, row.n]));
}

describe('connections per process', { timeout: 90_000 }, () => {
  it('each process names its connections, and MT_DB_POOL_MAX bounds its pool idle and under load', async () => {
    // Idle: settled once both processes started.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const idle = await connections();
    // Every connection to the database is one of a process's, named by what it is for.
    expect(Object.keys(idle).sort()).toEqual(
      expect.arrayContaining(['mt-serve', 'mt-serve-wake', 'mt-worker', 'mt-worker-wake']),
    );
    expect(Object.keys(idle).filter((name) => !/^mt-(serve|worker)(-wake|-setup|-queue)?$/.test(name))).toEqual([]);

    // Load: 40 API requests and 20 runs (each a model turn, a tool call to the upstream, a model turn) at once,
    // sampled every 20 ms until every run ended; the peak per name is what the pools reached.
    const peak: Record<string, number> = {};
    let loading = true;
    const sampling = (async () => {
      while (loading) {
        for (const [name, n] of Object.entries(await connections())) peak[name] = Math.max(peak[name] ?? 0, n);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    try {
      const reads = Array.from({ length: 40 }, () => stack.api.request('GET', '/v1/runs'));
      const starts = await Promise.all(
        Array.from({ length: 20 }, (_, i) => stack.api.startRun('support-desk', { message: `Order A-100${i % 3}?` })),
      );
      for (const read of await Promise.all(reads)) expect(read.status).toBe(200);
      for (const started of starts) expect(started.status, JSON.stringify(started.body)).toBe(201);
      const ended = await Promise.all(starts.map((started) => stack.api.waitForEnd(started.body.id, 60_000)));
      expect(ended.map((run) => run.status)).toEqual(ended.map(() => 'Completed'));
    } finally {
      loading = false;
      await sampling;
    }
    console.log(`connections idle ${JSON.stringify(idle)}, peak under load ${JSON.stringify(peak)}`);
    // The store's pool reached its bound (the load is enough to fill it) and never passed it.
    expect(peak['mt-serve']).toBe(POOL_MAX);
    expect(peak['mt-worker']).toBeLessThanOrEqual(POOL_MAX);
    // One wake-up connection a process.
    expect(peak['mt-serve-wake']).toBe(1);
    expect(peak['mt-worker-wake']).toBe(1);
    // Migrations' and the job queue's set-up (no statement deadline): at most 2, closed once idle.
    for (const name of ['mt-serve-setup', 'mt-worker-setup']) expect(peak[name] ?? 0).toBeLessThanOrEqual(2);
    // The job queue's own writes (decision 0245): at most 2 a process, used by those that executed the runs.
    for (const name of ['mt-serve-queue', 'mt-worker-queue']) expect(peak[name] ?? 0).toBeLessThanOrEqual(2);
    expect((peak['mt-serve-queue'] ?? 0) + (peak['mt-worker-queue'] ?? 0)).toBeGreaterThan(0);
  });
});
