import {
  type Db,
  fetchClaimingRuns,
  notifyWake,
  pgConnectionConfig,
  type Queryable,
  type RunEventRecord,
  type RunJobComplete,
  type RunJobFetch,
  type RunJobInsert,
  type RunRecord,
  type Wakeups,
  wakeTopics,
} from '@maitento/store';
import { BoundedMap } from '@maitento/egress';
import { engineErrors } from '../errors.js';
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
/** How often the fetch loop looks for jobs without a wake-up (retried jobs of a dead worker are found so). */
export const FETCH_POLL_MS = 2000;
/** The part of the store's `Wakeups` the engine uses: topics notified on `mt_wake`, and whether they arrive. */
export type RunWakeups = Pick<Wakeups, 'on' | 'listening'>;

/** One fetched job: the run, and the attempt's id (the run's fencing token while this attempt holds it). */
export interface RunJob {
  runId: string;
  attempt: string;
  /**
   * With `work(…, claimAs)`: the run as the fetch's own statement claimed it for this attempt (token
   * `<claimAs>/<attempt>`), with its events, or null when the run was not Running (nothing to do).
   */
  claimed?: { run: RunRecord; events: RunEventRecord[] } | null;
}

/** The job queue of runs: a run id in, a worker's handler out. */
export interface RunQueue {
  /**
   * Queues the run for a worker, in `tx` when given (the job commits with the state change that needs it), and
   * notifies `runs` there too unless `woken` (the change's own statement did, as `insertRun` does). Call
   * {@link RunQueue.sent} after the commit.
   */
  send(runId: string, tx?: Queryable, woken?: boolean): Promise<void>;
  /**
   * Stores the run's job in the statement `store` makes (the run's insert: one statement, no transaction), and
   * resolves with what `store` resolved with. `store` is given pg-boss's own job insert (its SQL and values, as
   * `send` would run them) and resolves with the job's id and its own result; it must store the job or fail.
   * Call {@link RunQueue.sent} after.
   */
  sendWith<T>(runId: string, store: (job: RunJobInsert) => Promise<{ jobId: string; result: T }>): Promise<T>;
  /**
   * Completes the attempt's job in the statement `store` makes (the run's last append), and resolves with what
   * `store` resolved with. `store` is given pg-boss's own complete (its UPDATE and values, as `complete` would run
   * them) and resolves with the job ids it completed (none when its statement stored nothing); when it completed
   * the job, the worker does not complete it again after the handler.
   */
  completeWith<T>(
    attempt: string,
    store: (complete: RunJobComplete) => Promise<{ completed: string[]; result: T }>,
  ): Promise<T>;
  /** Wakes this process's fetch loop after a job it sent was committed, when no wake-up will. */
  sent(): void;
  /**
   * Starts handling jobs, at most `concurrency` at a time, and fewer while `runsWorking()` (the handlers in flight
   * doing engine work, not waiting on a model or a tool) has reached the limit the event loop allows. With
   * `claimAs`, the fetch claims each job's run in its own statement (see {@link jobFetch}) and hands it in `claimed`.
   */
  work(
    concurrency: number,
    handler: (job: RunJob) => Promise<void>,
    runsWorking: () => number,
    claimAs?: string,
  ): Promise<void>;
  /** Stops fetching and waits up to `timeoutMs` for the handlers in flight (heartbeating them); true if all ended. */
  drain(timeoutMs: number): Promise<boolean>;
  /** Drains for at most `timeoutMs`, then closes pg-boss's own connections. */
  stop(timeoutMs: number): Promise<void>;
}

function bossOn(db: Db): PgBoss {
  // No useListenNotify (a second LISTEN connection): the engine fetches on the process's wake-ups. The supervisor
  // runs every 2 s so a job whose heartbeat stopped is retried within HEARTBEAT_SECONDS + 2 s; every hour it deletes
  // the queue's jobs finished more than a day ago.
  const common = {
    schedule: false,
    superviseIntervalSeconds: 2,
    monitorIntervalSeconds: 2,
    maintenanceIntervalSeconds: 3600,
  };
  return db.driver === 'pg' && db.connectionString !== undefined
    ? new PgBoss({
        ...common,
        // TLS and the application name as the store's own pool has them (pg-config.ts).
        ...pgConnectionConfig(db.connectionString, db.applicationName && `${db.applicationName}-queue`).config,
        max: 4,
      })
    : new PgBoss({ ...common, db: { executeSql: (text, values) => db.executeSql(text, values) }, backend: 'pglite' });
}

async function ensureQueue(boss: PgBoss, db: Db): Promise<void> {
  if ((await boss.getQueue(RUN_QUEUE)) !== null) return;
  try {
    await boss.createQueue(RUN_QUEUE, {
      policy: 'singleton',
      heartbeatSeconds: HEARTBEAT_SECONDS,
      retryLimit: 10,
      retryDelay: 1,
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
  for (const row of rows) await boss.send(RUN_QUEUE, { runId: row.id }, { singletonKey: row.id });
  if ((await boss.getQueue(OLD_QUEUE)) !== null) await boss.deleteQueue(OLD_QUEUE);
}

/**
 * Opens pg-boss on `db`: on PostgreSQL through its own small pool from the connection string, on PGlite
 * through `db.executeSql` (one connection shared with the store), with its supervisor on in both cases.
 */
export async function openRunQueue(db: Db, onError: (error: unknown) => void, wakeups?: RunWakeups): Promise<RunQueue> {
  const boss = bossOn(db);
  boss.on('error', onError);
  await boss.start();
  await ensureQueue(boss, db);
  let working = false;
  let loop: Promise<void> | undefined;
  const held = new Map<Promise<void>, { id: string; retryCount: number }>();
  let wake: (() => void) | undefined;
  // Whether jobs may be waiting: the last fetch filled its batch, or a wake-up came since it (perhaps for a run
  // whose job was active then: pg-boss fetches it once that job ends, so a freed slot looks again).
  let more = false;
  // A wake-up that came while jobs were held may be for one of their runs (an answer or a message stored just
  // before its job ended): pg-boss's singleton policy hides the run's new job until the held one completes, so the
  // fetch that wake-up caused found nothing; look again when a held job ends, not FETCH_POLL_MS later.
  let recheck = false;
  // The `runs` wake-ups (and sends in this process) not yet matched by a fetched job: each says one job may wait.
  // A full batch looks again at once only while some are left, so a batch of one for a lone run's wake-up is not
  // followed by an empty fetch. A fetch nobody asked for (the fallback poll, a recheck) that comes full looks again
  // at once, as it cannot know what is left.
  let demand = 0;
  const poke = () => {
    demand += 1;
    more = true;
    if (held.size > 0) recheck = true;
    wake?.();
  };
  // The attempts (`<job id>/<retry count>`) whose job the run's last append completed: not completed again.
  const completedEarly = new Set<string>();
  let unsubscribe: (() => void) | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  const drain = async (timeoutMs: number) => {
    if (working) {
      working = false;
      unsubscribe?.();
      poke();
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
  return {
    async send(runId, tx, woken = false) {
      const via = tx ?? db;
      const options = tx ? { db: { executeSql: (text: string, values?: unknown[]) => tx.query(text, values) } } : {};
      await boss.send(RUN_QUEUE, { runId }, { singletonKey: runId, ...options });
      if (!woken) await notifyWake(via, wakeTopics.runs);
      if (!tx) poke();
    },
    async sendWith<T>(runId: string, store: (job: RunJobInsert) => Promise<{ jobId: string; result: T }>) {
      let stored: { result: T } | undefined;
      const composed = {
        executeSql: async (text: string, values?: unknown[]) => {
          const { jobId, result } = await store(jobInsert(text, values));
          stored = { result };
          return { rows: [{ id: jobId }] };
        },
      };
      await boss.send(RUN_QUEUE, { runId }, { singletonKey: runId, db: composed });
      if (stored === undefined) {
        throw queueChanged('send() stored its job without the given db');
      }
      return stored.result;
    },
    async completeWith<T>(
      attempt: string,
      store: (complete: RunJobComplete) => Promise<{ completed: string[]; result: T }>,
    ) {
      const [id = '', retry = ''] = attempt.split('/').slice(-2);
      const job = { id, retryCount: Number(retry) };
      let stored: { completed: string[]; result: T } | undefined;
      const skipped = new Error('nothing stored');
      const composed = {
        executeSql: async (text: string, values?: unknown[]) => {
          if (stored !== undefined) throw queueChanged('complete() ran more than one statement on the given db');
          stored = await store(jobComplete(text, values));
          // Nothing stored (the append was refused): pg-boss is told nothing either, and the job stays active.
          if (!stored.completed.includes(id)) throw skipped;
          return { rows: [{ count: String(stored.completed.length), ids: stored.completed }] };
        },
      };
      try {
        await boss.complete(RUN_QUEUE, job, null, { db: composed });
      } catch (error) {
        if (error !== skipped) throw error;
      }
      if (stored === undefined) throw queueChanged('complete() ran its statement without the given db');
      if (stored.completed.includes(id)) completedEarly.add(`${id}/${job.retryCount}`);
      return stored.result;
    },
    sent() {
      if (!wakeups?.listening) poke();
    },
    async work(concurrency, handler, runsWorking, claimAs) {
      working = true;
      unsubscribe = wakeups?.on(wakeTopics.runs, poke);
      // The worker heartbeats every job it holds (fenced to the attempt it fetched) until its handler ends, also
      // while a stop drains: pg-boss retries a job elsewhere only when its worker stopped heartbeating.
      heartbeat = setInterval(
        () => {
          if (held.size === 0) return;
          boss.touch(RUN_QUEUE, [...held.values()]).catch(onError);
        },
        (HEARTBEAT_SECONDS * 1000) / 3,
      );
      heartbeat.unref();
      const allowed = runLimit(concurrency);
      // Our own fetch loop rather than boss.work(): it fetches as many jobs as it has free slots, at once again
      // while batches come full, on a `runs` wake-up (or when a slot frees after one), and every FETCH_POLL_MS else.
      loop = (async () => {
        while (working) {
          // Slots bound the runs held, most of which wait (on a model, an upstream); the limit bounds the runs
          // doing engine work at once: beyond what the event loop can serve, they would only make every run's
          // steps wait their turn. A run waiting on a model or a tool does not count against it.
          const busy = runsWorking();
          const free = Math.min(concurrency - held.size, allowed(busy) - busy);
          const holding = free <= 0 && held.size < concurrency;
          let got = 0;
          if (free > 0) {
            more = false;
            const told = demand;
            try {
              const claims = new Map<unknown, RunJob['claimed']>();
              let folded = 0;
              // pg-boss's fetch run by ours: its statement and the claim of every fetched job's run, in one.
              const options =
                claimAs === undefined
                  ? {}
                  : {
                      db: {
                        executeSql: async (text: string, values?: unknown[]) => {
                          folded += 1;
                          if (folded > 1) throw queueChanged('fetch() ran more than one statement on the given db');
                          const fetched = await fetchClaimingRuns(db, jobFetch(text, values), claimAs);
                          const rows = fetched.map(({ job, claimed }) => {
                            claims.set(job.id, claimed ?? null);
                            return job;
                          });
                          return { rows };
                        },
                      },
                    };
              const jobs = await boss.fetch<{ runId: string }>(RUN_QUEUE, { batchSize: free, ...options });
              if (claimAs !== undefined && folded === 0)
                throw queueChanged('fetch() ran its statement without the given db');
              got = jobs.length;
              // Fewer than asked: every job the wake-ups before this fetch announced was there to take (or is held
              // back behind its run's active job: `recheck`). Wake-ups that came during the fetch keep `more` set.
              demand = got < free ? Math.max(0, demand - told) : Math.max(0, demand - got);
              if (got === free && (told === 0 || demand > 0)) more = true;
              for (const job of jobs) {
                const attempt = { id: job.id, retryCount: job.retryCount };
                const run: RunJob = { runId: job.data.runId, attempt: `${job.id}/${job.retryCount}` };
                if (claimAs !== undefined) run.claimed = claims.get(job.id) ?? null;
                const done: Promise<void> = handler(run)
                  .then(
                    () => (completedEarly.delete(run.attempt) ? undefined : boss.complete(RUN_QUEUE, attempt)),
                    (error) => boss.fail(RUN_QUEUE, attempt, { message: String(error) }),
                  )
                  .then(() => {})
                  .catch(onError)
                  .finally(() => {
                    completedEarly.delete(run.attempt);
                    held.delete(done);
                    if (recheck) {
                      recheck = false;
                      more = true;
                    }
                    if (more) wake?.();
                  });
                held.set(done, attempt);
              }
            } catch (error) {
              onError(error);
            }
          }
          if (!working) break;
          if (more && !holding && held.size < concurrency) continue;
          await new Promise<void>((resolve) => {
            // Held back below the slots: look again once the loop has been measured anew.
            const timer = setTimeout(resolve, holding ? LOAD_WINDOW_MS : FETCH_POLL_MS);
            wake = () => {
              clearTimeout(timer);
              resolve();
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
      await boss.stop({ graceful: true, timeout: 5000, close: true });
    },
  };
}

/**
 * pg-boss's job insert as `send` gives it to its `db` option, checked to be the shape a run's insert can carry in
 * a data-modifying CTE: one `INSERT … RETURNING id` with its values. pg-boss 12 builds it with `plans.insertJobs`;
 * with notify on (a queue created with `notify: true` and LISTEN/NOTIFY on) it is a `WITH … SELECT` instead, which
 * cannot be nested in a CTE. Any other shape (an upgrade that changed it) fails the start loudly: no run is stored.
 */
export function jobInsert(text: string, values: unknown[] | undefined): RunJobInsert {
  const sql = text.trim();
  const placeholders = new Set([...sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
  const count = values?.length ?? 0;
  const shaped =
    /^INSERT INTO\s/i.test(sql) &&
    /\sRETURNING id$/i.test(sql) &&
    !sql.includes(';') &&
    count > 0 &&
    [...placeholders].every((n) => n >= 1 && n <= count);
  if (!shaped) {
    throw queueChanged(`its job insert is not one INSERT … RETURNING id with ${count} value(s): ${sql.slice(0, 80)}`);
  }
  return { text: sql, values: values ?? [] };
}

const queueChanged = (detail: string) => engineErrors.create('api:runs:queue-changed', { detail });

/** The spans of `sql` at parenthesis depth 0, outside quotes, where `word` starts as a whole word. */
function topLevel(sql: string, word: RegExp): number[] {
  const found: number[] = [];
  let depth = 0;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i];
    if (c === "'" || c === '"') {
      const end = sql.indexOf(c, i + 1);
      if (end < 0) return [];
      i = end;
    } else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (depth === 0 && /\s/.test(sql[i - 1] ?? ' ') && word.test(sql.slice(i, i + 12))) found.push(i);
  }
  return depth === 0 ? found : [];
}

/**
 * pg-boss's job fetch as `fetch` gives it to its `db` option, checked to be the shape the claim can join in one
 * statement: `WITH <ctes> UPDATE … RETURNING j.id, name, data, retry_count as "retryCount"…`, one top-level WITH
 * (PostgreSQL takes a data-modifying CTE only at the top level, so the claim joins pg-boss's list of CTEs, and
 * pg-boss's UPDATE becomes one of them), with its values as its only placeholders. pg-boss 12 builds it with
 * `plans.fetchNextJob`. Any other shape (an upgrade that changed it) fails the fetch loudly: no job is taken.
 */
export function jobFetch(text: string, values: unknown[] | undefined): RunJobFetch {
  const known = fetchShapes.get(text);
  if (known !== undefined && known.count === (values?.length ?? 0)) return { ...known.parts, values: values ?? [] };
  const parts = fetchShape(text, values);
  fetchShapes.set(text, { count: values?.length ?? 0, parts });
  return { ...parts, values: values ?? [] };
}

// The shapes checked, by pg-boss's text (a few: its batch size is in it), so a fetch does not scan its text again.
const fetchShapes = new BoundedMap<string, { count: number; parts: { ctes: string; update: string } }>(64);
const completeShapes = new BoundedMap<string, { count: number; update: string }>(64);

function fetchShape(text: string, values: unknown[] | undefined): { ctes: string; update: string } {
  const sql = text.trim();
  const count = values?.length ?? 0;
  const updates = topLevel(sql, /^UPDATE\s/i);
  const returning = topLevel(sql, /^RETURNING\s/i);
  const placeholders = [...sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1]));
  const shaped =
    /^WITH\s/i.test(sql) &&
    updates.length === 1 &&
    returning.length === 1 &&
    returning[0]! > updates[0]! &&
    topLevel(sql, /^(WITH|SELECT|INSERT|DELETE)\s/i).length === 1 &&
    /^RETURNING\s+j\.id,\s*name,\s*data,\s*retry_count as "retryCount"/i.test(sql.slice(returning[0])) &&
    !sql.includes(';') &&
    placeholders.every((n) => n >= 1 && n <= count);
  if (!shaped) {
    throw queueChanged(
      `its job fetch is not one WITH … UPDATE … RETURNING j.id, name, data, retry_count with ${count} value(s): ` +
        sql.replace(/\s+/g, ' ').slice(0, 80),
    );
  }
  const ctes = sql.slice('WITH'.length, updates[0]).trim();
  if (ctes === '' || ctes.endsWith(',')) throw queueChanged(`its job fetch has no CTE before its UPDATE: ${ctes}`);
  return { ctes, update: sql.slice(updates[0]) };
}

/**
 * pg-boss's complete as `complete` gives it to its `db` option, checked to be the shape a run's append can carry:
 * `WITH results AS (UPDATE … RETURNING id) SELECT COUNT(*), COALESCE(array_agg(id), '{}'::uuid[]) AS ids FROM
 * results` (pg-boss 12's `plans.completeJobs`, fenced to the attempt), of which the UPDATE becomes a CTE of the
 * append (PostgreSQL takes a data-modifying CTE only at the top level). Any other shape fails loudly.
 */
export function jobComplete(text: string, values: unknown[] | undefined): RunJobComplete {
  const known = completeShapes.get(text);
  if (known !== undefined && known.count === (values?.length ?? 0))
    return { update: known.update, values: values ?? [] };
  const checked = completeShape(text, values);
  completeShapes.set(text, { count: values?.length ?? 0, update: checked.update });
  return checked;
}

function completeShape(text: string, values: unknown[] | undefined): RunJobComplete {
  const sql = text.trim().replace(/\s+/g, ' ');
  const count = values?.length ?? 0;
  const match =
    /^WITH results AS \( ?(UPDATE \S+ SET completed_on = .* RETURNING id) ?\) SELECT COUNT\(\*\), COALESCE\(array_agg\(id\), '\{\}'::uuid\[\]\) AS ids FROM results$/i.exec(
      sql,
    );
  const update = match?.[1] ?? '';
  const placeholders = [...sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1]));
  const shaped =
    update !== '' &&
    topLevel(` ${update}`, /^(UPDATE|RETURNING)\s/i).length === 2 &&
    !sql.includes(';') &&
    count > 0 &&
    placeholders.every((n) => n >= 1 && n <= count);
  if (!shaped) {
    throw queueChanged(
      `its complete is not one WITH results AS (UPDATE … RETURNING id) SELECT … with ${count} value(s): ${sql.slice(0, 80)}`,
    );
  }
  return { update, values: values ?? [] };
}
