import { randomUUID } from 'node:crypto';
import { createPgDb, type Db, migrate } from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FETCH_POLL_MS, openRunQueue, type RunQueue } from '../src/worker/queue.js';

// The run queue on a real PostgreSQL (pg-boss, policy singleton per run).
let database: TestDatabase;
let db: Db;
let queue: RunQueue | undefined;

beforeAll(async () => {
  database = await createTestDatabase('mt_run_queue', { migrated: true });
  db = createPgDb(database.url);
  await migrate(db);
});

afterAll(async () => {
  await queue?.stop(5000);
  await db?.close();
  await database?.drop();
});

describe('the run queue', () => {
  it('starts a run again as soon as its job ends when it was sent while that job was active, not a poll later', async () => {
    queue = await openRunQueue(db, (error) => {
      throw error;
    });
    const runId = randomUUID();
    const started: number[] = [];
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await queue.work(
      4,
      async (job) => {
        expect(job.runId).toBe(runId);
        started.push(Date.now());
        if (started.length === 1) await held;
      },
      () => 0,
    );
    await queue.send(runId);
    const deadline = Date.now() + 10_000;
    while (started.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(started).toHaveLength(1);
    // Sent while the run's job is active (a message or an answer stored just before the worker ends the job): the
    // fetch that follows finds nothing, since pg-boss holds the new job back until the active one completes.
    await queue.send(runId);
    await new Promise((r) => setTimeout(r, 200));
    expect(started).toHaveLength(1);
    const releasedAt = Date.now();
    release();
    while (started.length < 2 && Date.now() < releasedAt + 10_000) await new Promise((r) => setTimeout(r, 10));
    expect(started).toHaveLength(2);
    // Without a look when the job ends this waits for the fallback poll (FETCH_POLL_MS after the empty fetch).
    expect((started[1] ?? 0) - releasedAt).toBeLessThan(FETCH_POLL_MS / 2);
  });
});
