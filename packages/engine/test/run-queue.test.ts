import { randomUUID } from 'node:crypto';
import { createPgDb, type Db, migrate, openWakeups } from '@maitento/store';
import { PgBoss } from 'pg-boss';
import { createTestDatabase, startTcpProxy, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FETCH_POLL_MS,
  HEARTBEAT_SECONDS,
  openRunQueue,
  RETRY_DELAY_SECONDS,
  RUN_QUEUE,
  type RunQueue,
  SUPERVISE_MS,
} from '../src/worker/queue.js';

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

  it('a backlog flows without the fallback poll: a full batch looks again at once', async () => {
    await queue?.stop(5000);
    queue = await openRunQueue(db, (error) => {
      throw error;
    });
    const done: number[] = [];
    let working = 0;
    // Every held run counts as doing engine work, so the worker's limit keeps it at a run or two at a time.
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
    // 30 runs at once, taken one or two at a time: a full batch looks again at once, so all end long before one
    // fallback poll per run would let them (30 x FETCH_POLL_MS). 5 x, a sixth of that.
    const began = Date.now();
    await Promise.all(Array.from({ length: 30 }, () => queue!.send(randomUUID())));
    while (done.length < 30 && Date.now() < began + 30_000) await new Promise((r) => setTimeout(r, 10));
    expect(done).toHaveLength(30);
    expect(Date.now() - began).toBeLessThan(5 * FETCH_POLL_MS);
  });
});

// The queue's behaviour through pg-boss's public API only (send with a transaction as its `db`, fetch, complete,
// fail, touch), as the worker relies on it: what each call leaves is observed through the handlers it runs.
describe("the run queue on pg-boss's public API", () => {
  const queues: RunQueue[] = [];
  const open = async () => {
    const q = await openRunQueue(db, () => {});
    queues.push(q);
    return q;
  };
  const until = async (done: () => boolean, ms: number) => {
    const deadline = Date.now() + ms;
    while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  };
  afterAll(async () => {
    await queue?.stop(5000);
    queue = undefined;
    await Promise.all(queues.map((q) => q.stop(5000)));
  });

  it('a job sent in a transaction that rolls back is never handed out; one sent in a committed one is, once', async () => {
    await queue?.stop(5000);
    queue = undefined;
    const sender = await open();
    const [gone, kept] = [randomUUID(), randomUUID()];
    await expect(
      db.transaction(async (tx) => {
        await sender.send(gone, tx);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await db.transaction((tx) => sender.send(kept, tx));
    // Two workers on the queue: a job goes to one of them, once.
    const seen: string[] = [];
    for (const q of [await open(), await open()]) {
      await q.work(
        4,
        async (job) => void seen.push(job.runId),
        () => 0,
      );
    }
    await until(() => seen.includes(kept), 10_000);
    // Past two fallback polls of both workers: nothing more comes.
    await new Promise((r) => setTimeout(r, 2 * FETCH_POLL_MS + 500));
    expect(seen.filter((id) => id === kept)).toHaveLength(1);
    expect(seen).not.toContain(gone);
    for (const q of queues.splice(0)) await q.stop(5000);
  });

  it('a handler that fails has its job failed and retried (a new attempt); one that returns has it completed', async () => {
    const q = await open();
    const [failing, passing] = [randomUUID(), randomUUID()];
    const attempts: Record<string, string[]> = { [failing]: [], [passing]: [] };
    await q.work(
      4,
      async (job) => {
        attempts[job.runId]?.push(job.attempt);
        if (job.runId === failing && attempts[failing]!.length === 1) throw new Error('step failed');
      },
      () => 0,
    );
    await q.send(failing);
    await q.send(passing);
    // pg-boss retries the failed job after its retry delay (1 s), as a new attempt of the same job.
    await until(() => attempts[failing]!.length >= 2 && attempts[passing]!.length >= 1, 10_000);
    await new Promise((r) => setTimeout(r, 2 * FETCH_POLL_MS + 500));
    const [first, second] = attempts[failing]!;
    expect(attempts[failing]).toHaveLength(2);
    expect(first!.split('/')[0]).toBe(second!.split('/')[0]);
    expect([first!.split('/')[1], second!.split('/')[1]]).toEqual(['0', '1']);
    expect(attempts[passing]).toHaveLength(1);
    for (const q of queues.splice(0)) await q.stop(5000);
  });

  it("a held job's heartbeat keeps it from other workers past its heartbeat time", async () => {
    const holder = await open();
    const other = await open();
    const runId = randomUUID();
    const seen: { by: string; at: number }[] = [];
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    await holder.work(
      1,
      async (job) => {
        seen.push({ by: 'holder', at: Date.now() });
        if (job.runId === runId) await released;
      },
      () => 0,
    );
    await holder.send(runId);
    await until(() => seen.length === 1, 10_000);
    await other.work(
      1,
      async () => void seen.push({ by: 'other', at: Date.now() }),
      () => 0,
    );
    // Held past its heartbeat time (HEARTBEAT_SECONDS) and the supervisor's pass: touched, it stays the holder's.
    await new Promise((r) => setTimeout(r, (HEARTBEAT_SECONDS + 3) * 1000));
    expect(seen.map((s) => s.by)).toEqual(['holder']);
    expect(holder.health().heartbeatLateMs).toBe(0);
    release();
    for (const q of queues.splice(0)) await q.stop(5000);
  }, 30_000);

  it("retries a dead worker's job within its heartbeat and a busy pass, when no wake-up told this worker of it", async () => {
    // The dead worker: pg-boss through its public API, fetching the run's job before this worker started (this one
    // saw no `runs` wake-up of it), heartbeating it for a while (past the pass a wake-up brings), then
    // silent, as a killed process is.
    const executeSql = (text: string, values?: unknown[]) => db.executeSql(text, values ?? []);
    const dead = new PgBoss({ db: { executeSql }, supervise: false, schedule: false, registerInstance: false });
    await dead.start();
    const wakeups = await openWakeups(db);
    const sender = await open();
    const runId = randomUUID();
    await sender.send(runId);
    const [job] = await dead.fetch<{ runId: string }>(RUN_QUEUE);
    expect(job?.data.runId).toBe(runId);
    // This worker listens for wake-ups: with the queue idle it would supervise once a minute; the job active
    // elsewhere (its last pass's counts) keeps it supervising every SUPERVISE_MS.
    const worker = await openRunQueue(db, () => {}, wakeups);
    queues.push(worker);
    let retried: number | undefined;
    await worker.work(
      1,
      async (taken) => {
        if (taken.runId === runId) retried = Date.now();
      },
      () => 0,
    );
    for (let beat = 0; beat < 3; beat += 1) {
      await new Promise((r) => setTimeout(r, 3000));
      await dead.touch(RUN_QUEUE, [{ id: job!.id, retryCount: job!.retryCount }]);
    }
    const silentAt = Date.now();
    await until(() => retried !== undefined, 15_000);
    await dead.stop({ graceful: false });
    await wakeups.close();
    expect(retried, 'the job was retried here').toBeDefined();
    // Its heartbeat's time, two passes (SUPERVISE_MS: one whose monitor claim was just taken, the next) and pg-boss's
    // retry delay, after which the pass that retried it makes this worker fetch (decision 0201): 13 s, within 15 s.
    const worst = HEARTBEAT_SECONDS * 1000 + 2 * SUPERVISE_MS + RETRY_DELAY_SECONDS * 1000;
    expect(worst).toBeLessThanOrEqual(13_000);
    expect(retried! - silentAt).toBeLessThan(15_000);
  }, 45_000);

  it('goes quiet once a sent job ended: one pass after its wake-up, then no statement until the idle pass', async () => {
    // The queue on the test's database, counting every statement it makes (pg-boss's included).
    let statements = 0;
    const counting = new Proxy(db, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (key !== 'query' && key !== 'executeSql') return typeof value === 'function' ? value.bind(target) : value;
        return (...args: unknown[]) => {
          statements += 1;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const wakeups = await openWakeups(db);
    const worker = await openRunQueue(counting, () => {}, wakeups);
    queues.push(worker);
    const done: string[] = [];
    await worker.work(
      4,
      async (job) => void done.push(job.runId),
      () => 0,
    );
    // Past its first pass (SUPERVISE_MS after it began working), which found the queue idle.
    await new Promise((r) => setTimeout(r, SUPERVISE_MS + 1500));
    const runId = randomUUID();
    await worker.send(runId);
    await until(() => done.includes(runId), 5000);
    expect(done).toContain(runId);
    // The pass the wake-up brings (3 s after it) counts nothing queued or active: the queue is idle again.
    await new Promise((r) => setTimeout(r, 3000 + SUPERVISE_MS + 1000));
    const before = statements;
    await new Promise((r) => setTimeout(r, 3 * FETCH_POLL_MS));
    expect(statements - before, 'statements of an idle queue in 6 s').toBe(0);
    await wakeups.close();
  }, 30_000);

  it("has every statement under the store's deadline: with its database silent, the loop keeps turning and the heartbeat reports late", async () => {
    // The queue on a Db whose every connection goes through a proxy that can go silent (a stalled network).
    const proxy = await startTcpProxy();
    const proxied = createPgDb(proxy.via(database.url), { timeoutMs: 500 });
    const q = await openRunQueue(proxied, () => {});
    const runId = randomUUID();
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let taken = 0;
    try {
      await q.work(
        1,
        async (job) => {
          if (job.runId !== runId) return;
          taken++;
          await released;
        },
        () => 0,
      );
      await q.send(runId);
      await until(() => taken === 1, 10_000);
      expect(q.health().heartbeatLateMs).toBe(0);
      proxy.freeze();
      // The heartbeat (every 3.3 s) and the polls meet a silent database: each fails at its deadline instead of
      // hanging, so the loop goes on turning, and the heartbeat says how late it is.
      const began = Date.now();
      await until(() => q.health().heartbeatLateMs > 0, 8000);
      expect(Date.now() - began).toBeLessThan(8000);
      for (let i = 0; i < 3; i++) {
        expect(q.health().sinceTurnMs).toBeLessThan(FETCH_POLL_MS + 1500);
        await new Promise((r) => setTimeout(r, 700));
      }
    } finally {
      proxy.thaw();
      release();
      await q.stop(5000);
      await proxied.close();
      await proxy.close();
    }
  }, 30_000);
});
