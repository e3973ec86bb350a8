import { randomUUID } from 'node:crypto';
import { createPgDb, type Db, migrate } from '@maitento/store';
import pg from 'pg';
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

  it('fetches once for a lone run (no empty fetch after a batch of one), and a backlog still flows without the poll', async () => {
    await queue?.stop(5000);
    queue = await openRunQueue(db, (error) => {
      throw error;
    });
    let fetches = 0;
    const query = pg.Client.prototype.query;
    // biome-ignore lint/suspicious/noExplicitAny: pg's overloads
    pg.Client.prototype.query = function (this: pg.Client, config: any, ...rest: any[]) {
      const text: string = typeof config === 'string' ? config : (config?.text ?? '');
      if (/WITH\s+next AS/.test(text) && text.includes("'mt-run'")) fetches++;
      // biome-ignore lint/suspicious/noExplicitAny: pg's overloads
      return (query as any).call(this, config, ...rest);
    } as typeof query;
    try {
      const done: number[] = [];
      let working = 0;
      // Every held run counts as doing engine work, so the worker's limit keeps it at one run at a time.
      await queue.work(
        8,
        async () => {
          working++;
          await new Promise((r) => setTimeout(r, 20));
          working--;
          done.push(Date.now());
        },
        () => working,
      );
      await new Promise((r) => setTimeout(r, 300));
      // One run: its send wakes the loop, which fetches it; the batch (of one, the limit) was full, but the one
      // wake-up was answered, so no second, empty fetch follows.
      fetches = 0;
      await queue.send(randomUUID());
      const deadline = Date.now() + 1500;
      while (done.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 200));
      expect(done).toHaveLength(1);
      expect(fetches).toBe(1);
      // 30 runs at once, taken one or two at a time: each wake-up left unanswered looks again at once, so all end
      // long before one fallback poll per run would let them (30 x FETCH_POLL_MS). 5 x, a sixth of that: 2 x took
      // 4.4 s at load 20 (a fetch and a complete of pg-boss a run).
      const began = Date.now();
      await Promise.all(Array.from({ length: 30 }, () => queue!.send(randomUUID())));
      while (done.length < 31 && Date.now() < began + 30_000) await new Promise((r) => setTimeout(r, 10));
      expect(done).toHaveLength(31);
      expect(Date.now() - began).toBeLessThan(5 * FETCH_POLL_MS);
    } finally {
      pg.Client.prototype.query = query;
    }
  });
});
