import { createHash } from 'node:crypto';
import { BoundedMap } from '@maitento/egress';
import { anyRunRunning, type Db, notifyWake, type Queryable, type Wakeups, wakeTopics } from '@maitento/store';
import { PgBoss } from 'pg-boss';
import { LOAD_WINDOW_MS, runLimit } from './run-limit.js';

/**
 * The pg-boss queue runs are executed through: policy `singleton` keyed by run id (at most one active job per run,
 * any number queued, so an answer or a cancel sent while the run's job is active is never dropped).
 */
export const RUN_QUEUE = 'mt-run';
/** The queue of earlier versions (policy standard, no heartbeat): its jobs are moved over once, then it is deleted. */
const OLD_QUEUE = 'mt-runs';
/** A held job's heartbeat: pg-boss retries a job not touched for this long (its minimum). */
export const HEARTBEAT_SECONDS = 10;
/**
 * How often the fetch loop looks for jobs without a wake-up while the queue is busy (see {@link SUPERVISE_MS}).
 * While the queue is idle it looks only when woken. A dead worker's retried job notifies nobody: a pass that counted
 * jobs makes the loop look at once and again {@link RETRY_DELAY_SECONDS} later, when a job it retried is due.
 */
export const FETCH_POLL_MS = 2000;
/** pg-boss's delay before a failed job (a handler's failure, a stopped heartbeat) may be fetched again. */
export const RETRY_DELAY_SECONDS = 1;
/**
 * How often a working process supervises the queue (pg-boss's `supervise()`: a job whose heartbeat stopped is
 * retried, expired jobs failed, finished ones deleted hourly) while the queue is busy: this process holds jobs, the
 * last pass counted jobs queued or active anywhere, or wake-ups are not listening. The pass's monitor (the heartbeat
 * check) runs when {@link MONITOR_SECONDS} passed since any process's last, so a job whose heartbeat lapsed is
 * retried within 2 × SUPERVISE_MS (a pass whose claim another process's pass just took, then the next), and fetched
 * RETRY_DELAY_SECONDS later: a killed worker's run within HEARTBEAT_SECONDS + 2 × SUPERVISE_MS + RETRY_DELAY_SECONDS
 * of its last heartbeat (13 s; decision 0201). A job sent (a `runs` wake-up) is counted by the first pass
 * COUNTS_LAG_MS after it; no job can miss its heartbeat before that.
 */
export const SUPERVISE_MS = 1000;
/** pg-boss's monitor claim (`monitorIntervalSeconds`): the counts and the heartbeat check run at most this often. */
export const MONITOR_SECONDS = 1;
/** How often a working process supervises the queue while it is idle (nothing held, sent, queued or active). */
export const IDLE_SUPERVISE_MS = 60_000;
/**
 * How long after the last job sent a pass's counts may still miss it: the counts are pg-boss's, refreshed by the
 * pass that wins its monitor claim (`monitorIntervalSeconds`, 1 s), so a pass reads counts at most that old. A
 * `runs` wake-up brings a pass this long after it, which reads counts that have the job.
 */
const COUNTS_LAG_MS = 3000;
/** The part of the store's `Wakeups` the engine uses: topics notified on `mt_wake`, and whether they arrive. */
export type RunWakeups = Pick<Wakeups, 'on' | 'listening'>;

/** One fetched job: the run, and the attempt's id (`<job id>/<retry count>`, part of the run's fencing token). */
export interface RunJob {
  runId: string;
  attempt: string;
}

/** How the worker side of the queue fares: what readiness reports (`/health/ready`). */
export interface QueueHealth {
  /** Milliseconds since the fetch loop last turned (null: this process does not work the queue). */
  sinceTurnMs: number | null;
  /** Milliseconds since the held jobs' heartbeat last went through, while jobs are held and it failed since (else 0). */
  heartbeatLateMs: number;
}

/** The job queue of runs: a run id in, a worker's handler out. */
export interface RunQueue {
  /**
   * Queues the run for a worker, in `tx` when given (the job commits with the state change that needs it: pg-boss's
   * `send` with its `db` option), and notifies `runs` there too unless `woken` (the change's own statement did, as
   * `insertRun` does). Call {@link RunQueue.sent} after the commit.
   */
  send(runId: string, tx?: Queryable, woken?: boolean): Promise<void>;
  /** Wakes this process's fetch loop after a job it sent was committed, when no wake-up will. */
  sent(): void;
  /**
   * Starts handling jobs, at most `concurrency` at a time, and fewer while `runsWorking()` (the handlers in flight
   * doing engine work, not waiting on a model or a tool) has reached the limit the event loop allows.
   */
  work(concurrency: number, handler: (job: RunJob) => Promise<void>, runsWorking: () => number): Promise<void>;
  /** Stops fetching and waits up to `timeoutMs` for the handlers in flight (heartbeating them); true if all ended. */
  drain(timeoutMs: number): Promise<boolean>;
  /** Drains for at most `timeoutMs`, then stops pg-boss (it owns no connection: the store's pool is the caller's). */
  stop(timeoutMs: number): Promise<void>;
  /** The fetch loop's and the heartbeat's state now. */
  health(): QueueHealth;
}

/**
 * pg-boss on the store's `db` through its documented `db` option: on PostgreSQL every statement pg-boss makes (the
 * fetch, complete, fail, heartbeat, its supervisor's and maintenance's) goes through a store pool with the store's
 * deadline, so a connection that hangs is dropped and replaced like any of the store's: `db.relaxed` where the store
 * has one, whose commits do not wait for the write-ahead log's flush (decision 0245: a job state lost with a crash
 * of PostgreSQL is redone by a retry, and the runs' own appends no longer queue behind these flushes). A job is sent
 * on `db` itself, durably ({@link RunQueue.send}). The statements of its start (installing or migrating its schema,
 * creating the queue: DDL without values) run before `started` is set, without a statement deadline, as the store's
 * own migrations do.
 */
function bossOn(db: Db): {
  boss: PgBoss;
  started: () => void;
  named: (text: string) => string;
  durable: (q: Queryable) => { executeSql: (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }> };
} {
  let setup = true;
  // On PostgreSQL a statement with values is prepared once per connection under a name its text gives (its text an
  // opaque key, as pg's own statement cache would use): pg-boss's fetch, complete and touch run at every run.
  const names = new BoundedMap<string, string>(64);
  const named = (text: string) => {
    let name = names.get(text);
    if (name === undefined) {
      name = `mt_pgboss_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
      names.set(text, name);
    }
    return name;
  };
  const runtime = db.relaxed ?? db;
  const executeSql = (text: string, values?: unknown[]) =>
    setup && values === undefined
      ? db.executeSql(text)
      : db.driver === 'pg' && values !== undefined && values.length > 0
        ? runtime.query(text, values, { name: named(text) })
        : runtime.executeSql(text, values ?? []);
  // pg-boss's `db` option for a statement on `q` (the store's pool or a transaction of it): a commit that waits.
  const durable = (q: Queryable) => ({
    executeSql: (text: string, values?: unknown[]) =>
      db.driver === 'pg' && values !== undefined && values.length > 0
        ? q.query(text, values, { name: named(text) })
        : q.query(text, values),
  });
  // No useListenNotify (a second LISTEN connection): the engine fetches on the process's wake-ups. No timer of
  // pg-boss's supervisor (`supervise: false`): a process that works the queue calls `supervise()` itself, often only
  // while the queue is busy (see SUPERVISE_MS); a process that only sends never does. In a pass, the monitor (counts,
  // expiry, stopped heartbeats) runs when 1 s passed since any process's last, the maintenance (deleting the jobs
  // finished more than a day ago) when an hour did. No REINDEX CONCURRENTLY under a statement deadline: the job table
  // holds a day of jobs. No vacuum diagnosis (its warnings are events nothing of ours reads). No instance registry (a
  // row per process rewritten every 30 s, read by nothing of ours). Its remaining timers: the queue cache and the
  // poll for asynchronous migrations (a read a minute each).
  const boss = new PgBoss({
    schedule: false,
    supervise: false,
    registerInstance: false,
    monitorIntervalSeconds: MONITOR_SECONDS,
    maintenanceIntervalSeconds: 3600,
    queueCacheIntervalSeconds: 60,
    bamIntervalSeconds: 60,
    reindex: false,
    monitorVacuum: false,
    db: { executeSql },
    ...(db.driver === 'pg' ? {} : { backend: 'pglite' as const }),
  });
  return {
    boss,
    named,
    durable,
    started: () => {
      setup = false;
    },
  };
}

async function ensureQueue(boss: PgBoss, db: Db, durable: ReturnType<typeof bossOn>['durable']): Promise<void> {
  if ((await boss.getQueue(RUN_QUEUE)) !== null) return;
  try {
    await boss.createQueue(RUN_QUEUE, {
      policy: 'singleton',
      heartbeatSeconds: HEARTBEAT_SECONDS,
      retryLimit: 10,
      retryDelay: RETRY_DELAY_SECONDS,
      expireInSeconds: 86_400,
      deleteAfterSeconds: 86_400,
    });
  } catch (error) {
    // Another process created it at the same moment.
    if ((await boss.getQueue(RUN_QUEUE)) === null) throw error;
    return;
  }
  // Created here: the Running runs of an earlier version had their jobs (or a lease sweep) in the old queue.
  const { rows } = await db.query<{ id: string }>("SELECT id FROM mt_runs WHERE status = 'Running'");
  for (const row of rows) await boss.send(RUN_QUEUE, { runId: row.id }, { singletonKey: row.id, db: durable(db) });
  if ((await boss.getQueue(OLD_QUEUE)) !== null) await boss.deleteQueue(OLD_QUEUE);
}

/** Opens pg-boss on `db` (see {@link bossOn}); {@link RunQueue.work} supervises it. */
export async function openRunQueue(db: Db, onError: (error: unknown) => void, wakeups?: RunWakeups): Promise<RunQueue> {
  const { boss, started, durable } = bossOn(db);
  boss.on('error', onError);
  await boss.start();
  await ensureQueue(boss, db, durable);
  started();

  // The jobs being handled, by their handler's end, with the attempt pg-boss fences their touch and settle to.
  const held = new Map<Promise<void>, { id: string; retryCount: number }>();
  // The loop runs while `working`. `wanted` counts the `runs` wake-ups (each says one job was sent) not yet matched
  // by a fetched job; `more` says jobs may wait that no wake-up told of (a poll's or a start's batch came full).
  // `recheck` says a wake-up's fetch found less than it announced while jobs were held: pg-boss's singleton policy
  // hides a run's new job until its active one ends (an answer stored just before its job ended), so a freed slot
  // looks again.
  let working = false;
  let wanted = 0;
  let more = false;
  let recheck = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  let lastTurn: number | undefined;
  // When the heartbeat last went through (or jobs began to be held), and whether its last attempt failed.
  let lastBeat = performance.now();
  let beatFailing = false;
  let heartbeat: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  // Whether the queue is busy (see SUPERVISE_MS): when a job was last sent (a `runs` wake-up, a send of this
  // process), whether the last supervising pass counted jobs queued or active, and when that pass began.
  let lastSent = Number.NEGATIVE_INFINITY;
  let counted = true;
  let lastPass = Number.NEGATIVE_INFINITY;
  let supervisor: NodeJS.Timeout | undefined;
  let retried: NodeJS.Timeout | undefined;
  const queueBusy = () => held.size > 0 || counted || !wakeups?.listening;
  // A pass is due every SUPERVISE_MS while busy, COUNTS_LAG_MS after a job was sent since the last pass began (its
  // counts then have it), and every IDLE_SUPERVISE_MS else.
  const passDue = () => {
    const now = performance.now();
    return (
      queueBusy() || (lastSent > lastPass && now - lastSent >= COUNTS_LAG_MS) || now - lastPass >= IDLE_SUPERVISE_MS
    );
  };
  const poke = () => {
    wanted += 1;
    lastSent = performance.now();
    wake?.();
  };
  // One pass of pg-boss's supervisor over the run queue, then its counts: jobs queued (a retried one included) or
  // active anywhere keep the queue busy and make the fetch loop look now.
  const supervise = async () => {
    lastPass = performance.now();
    try {
      await boss.supervise(RUN_QUEUE);
      const queue = await boss.getQueue(RUN_QUEUE);
      const jobs = queue === null ? 0 : queue.queuedCount + queue.activeCount;
      // The counts are pg-boss's cache, refreshed by its monitor: while they say none, a Running run (whose job is
      // queued, retried or held by a worker that may have died) still keeps the queue busy, so a dead worker's job is
      // retried and fetched within the documented recovery time rather than at the next idle pass.
      counted = jobs > 0 || lastPass - lastSent < COUNTS_LAG_MS || (await anyRunRunning(db));
      if (jobs > 0) {
        more = true;
        wake?.();
        // A job this pass retried (a stopped heartbeat) is due after pg-boss's retry delay: look again then.
        clearTimeout(retried);
        retried = setTimeout(
          () => {
            more = true;
            wake?.();
          },
          RETRY_DELAY_SECONDS * 1000 + 50,
        );
        retried.unref();
      }
    } catch (error) {
      counted = true;
      onError(error);
    }
  };

  const drain = async (timeoutMs: number) => {
    if (working) {
      working = false;
      unsubscribe?.();
      wake?.();
      await loop;
    }
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const drained = await Promise.race([Promise.allSettled([...held.keys()]).then(() => true), deadline]);
    clearTimeout(timer);
    return drained;
  };

  const beat = async () => {
    if (held.size === 0) {
      lastBeat = performance.now();
      beatFailing = false;
      return;
    }
    try {
      await boss.touch(RUN_QUEUE, [...held.values()]);
      lastBeat = performance.now();
      beatFailing = false;
    } catch (error) {
      beatFailing = true;
      onError(error);
    }
  };

  const take = (
    job: { id: string; retryCount: number; data: { runId: string } },
    handler: (job: RunJob) => Promise<void>,
  ) => {
    const attempt = { id: job.id, retryCount: job.retryCount };
    const done: Promise<void> = handler({ runId: job.data.runId, attempt: `${job.id}/${job.retryCount}` })
      .then(
        () => boss.complete(RUN_QUEUE, attempt),
        (error) => boss.fail(RUN_QUEUE, attempt, { message: String(error) }),
      )
      .then(() => {})
      .catch(onError)
      .finally(() => {
        held.delete(done);
        if (recheck) {
          recheck = false;
          poke();
        } else if (wanted > 0 || more) wake?.();
      });
    held.set(done, attempt);
  };

  return {
    async send(runId, tx, woken = false) {
      await boss.send(RUN_QUEUE, { runId }, { singletonKey: runId, db: durable(tx ?? db) });
      if (!woken) await notifyWake(tx ?? db, wakeTopics.runs);
      if (!tx) poke();
    },
    sent() {
      if (!wakeups?.listening) poke();
    },
    async work(concurrency, handler, runsWorking) {
      working = true;
      // Jobs may have been sent before the worker started.
      more = true;
      unsubscribe = wakeups?.on(wakeTopics.runs, poke);
      // The worker heartbeats every job it holds (fenced to the attempt it fetched) until its handler ends, also
      // while a stop drains: pg-boss retries a job elsewhere only when its worker stopped heartbeating.
      let beating = false;
      heartbeat = setInterval(
        () => {
          if (beating) return;
          beating = true;
          beat().finally(() => {
            beating = false;
          });
        },
        (HEARTBEAT_SECONDS * 1000) / 3,
      );
      heartbeat.unref();
      // Supervision when a pass is due (passDue); a tick without a pass makes no statement.
      let passing = false;
      supervisor = setInterval(() => {
        if (passing || !working || !passDue()) return;
        passing = true;
        supervise().finally(() => {
          passing = false;
        });
      }, SUPERVISE_MS);
      supervisor.unref();
      const allowed = runLimit(concurrency);
      // Our own fetch loop rather than boss.work(): it fetches as many jobs as it has free slots, at once again
      // while batches come full, on a `runs` wake-up (or when a slot frees after one, or a supervising pass counted
      // jobs), and every FETCH_POLL_MS while the queue is busy; an idle queue's loop turns without a statement.
      loop = (async () => {
        // Whether this turn is the fallback poll's (no wake-up asked for it).
        let polled = false;
        while (working) {
          // Slots bound the runs held, most of which wait (on a model, an upstream); the limit bounds the runs
          // doing engine work at once: beyond what the event loop can serve, they would only make every run's
          // steps wait their turn. A run waiting on a model or a tool does not count against it.
          const busy = runsWorking();
          const free = Math.min(concurrency - held.size, allowed(busy) - busy);
          if (free > 0 && (wanted > 0 || more || polled)) {
            const asked = wanted;
            const unasked: boolean = more || polled;
            wanted = 0;
            more = false;
            try {
              const jobs = await boss.fetch<{ runId: string }>(RUN_QUEUE, { batchSize: free });
              // A full batch looks again at once while wake-ups are left unanswered, or when it was not asked for by
              // wake-ups alone (it cannot know what is left); a batch of one for a lone run's wake-up does not.
              if (jobs.length === free) {
                wanted += Math.max(0, asked - free);
                more = unasked;
              } else if (jobs.length < asked && held.size > 0) recheck = true;
              for (const job of jobs) take(job, handler);
            } catch (error) {
              onError(error);
            }
          }
          lastTurn = performance.now();
          if (!working) break;
          polled = false;
          if ((wanted > 0 || more) && free > 0 && held.size < concurrency) continue;
          const heldBack = free <= 0 && held.size < concurrency;
          polled = await new Promise<boolean>((resolve) => {
            // Held back below the slots: look again once the loop has been measured anew.
            const timer = setTimeout(
              () => resolve(!heldBack && queueBusy()),
              heldBack ? LOAD_WINDOW_MS : FETCH_POLL_MS,
            );
            wake = () => {
              clearTimeout(timer);
              resolve(false);
            };
          });
          wake = undefined;
        }
      })();
    },
    drain,
    async stop(timeoutMs) {
      await drain(timeoutMs);
      clearInterval(heartbeat);
      clearInterval(supervisor);
      clearTimeout(retried);
      await boss.stop({ graceful: true, timeout: 5000 });
    },
    health() {
      const now = performance.now();
      return {
        sinceTurnMs: working && lastTurn !== undefined ? Math.round(now - lastTurn) : null,
        heartbeatLateMs: beatFailing && held.size > 0 ? Math.round(now - lastBeat) : 0,
      };
    },
  };
}
