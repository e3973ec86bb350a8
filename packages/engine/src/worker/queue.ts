import type { Db } from '@maitento/store';
import { PgBoss } from 'pg-boss';
import { LOAD_WINDOW_MS, runLimit } from './run-limit.js';

/** The pg-boss queue runs are executed through. */
export const RUN_QUEUE = 'mt-runs';

/** The job queue of runs: a run id in, a worker's handler out. */
export interface RunQueue {
  /** Queues the run for a worker (a duplicate job is harmless: the run's lease admits one worker). */
  send(runId: string): Promise<void>;
  /**
   * Starts handling jobs, at most `concurrency` at a time, and fewer while `runsWorking()` (the handlers in flight
   * doing engine work, not waiting on a model or a tool) has reached the limit the event loop allows.
   */
  work(concurrency: number, handler: (runId: string) => Promise<void>, runsWorking: () => number): Promise<void>;
  /** Stops handling jobs (waiting up to `timeoutMs` for handlers) and closes pg-boss's own connections. */
  stop(timeoutMs: number): Promise<void>;
}

/**
 * Opens pg-boss on `db`: on PostgreSQL through its own small pool from the connection string, on PGlite
 * through `db.executeSql` (one connection shared with the store; multi-statement SQL answers every row),
 * with its maintenance on in both cases.
 */
export async function openRunQueue(db: Db, onError: (error: unknown) => void): Promise<RunQueue> {
  // pg-boss's supervisor runs on both backends (see docs/runs.md): every minute it refreshes queue stats,
  // every hour it deletes the queue's jobs finished more than a day ago, so the job table stays small.
  const common = { schedule: false, maintenanceIntervalSeconds: 3600 };
  const boss =
    db.driver === 'pg' && db.connectionString !== undefined
      ? new PgBoss({ ...common, connectionString: db.connectionString, max: 4 })
      : new PgBoss({
          ...common,
          db: { executeSql: (text, values) => db.executeSql(text, values) },
          backend: 'pglite',
        });
  boss.on('error', onError);
  await boss.start();
  const queue = await boss.getQueue(RUN_QUEUE);
  if (queue === null) {
    try {
      await boss.createQueue(RUN_QUEUE, {
        retryLimit: 10,
        retryDelay: 1,
        expireInSeconds: 3600,
        deleteAfterSeconds: 86_400,
      });
    } catch (error) {
      // Another process created it at the same moment.
      if ((await boss.getQueue(RUN_QUEUE)) === null) throw error;
    }
  } else if (queue.deleteAfterSeconds !== 86_400) {
    // A queue made by an earlier version.
    await boss.updateQueue(RUN_QUEUE, { deleteAfterSeconds: 86_400 });
  }
  let working = false;
  let loop: Promise<void> | undefined;
  const running = new Set<Promise<void>>();
  let wake: (() => void) | undefined;
  const poke = () => wake?.();
  return {
    async send(runId) {
      await boss.send(RUN_QUEUE, { runId });
      // A worker in this process (mt serve) takes it now rather than at its next poll.
      poke();
    },
    async work(concurrency, handler, runsWorking) {
      working = true;
      const allowed = runLimit(concurrency);
      // Our own fetch loop rather than boss.work(): it fetches as many jobs as it has free slots, at once
      // again while jobs keep coming and whenever a slot frees, and every 250 ms when idle. boss.work()
      // waits out its polling interval after each job, which capped a worker at ~2 runs/s a slot.
      loop = (async () => {
        while (working) {
          // Slots bound the runs held, most of which wait (on a model, an upstream); the limit bounds the runs
          // doing engine work at once: beyond what the event loop can serve, they would only make every run's
          // steps wait their turn. A run waiting on a model or a tool does not count against it.
          const busy = runsWorking();
          const free = Math.min(concurrency - running.size, allowed(busy) - busy);
          const held = free <= 0 && running.size < concurrency;
          let got = 0;
          if (free > 0) {
            try {
              const jobs = await boss.fetch<{ runId: string }>(RUN_QUEUE, { batchSize: free });
              got = jobs.length;
              for (const job of jobs) {
                const done: Promise<void> = handler(job.data.runId)
                  .then(
                    () => boss.complete(RUN_QUEUE, job.id),
                    (error) => boss.fail(RUN_QUEUE, job.id, { message: String(error) }),
                  )
                  .then(() => {})
                  .catch(onError)
                  .finally(() => {
                    running.delete(done);
                    poke();
                  });
                running.add(done);
              }
            } catch (error) {
              onError(error);
            }
          }
          if (!working) break;
          if (got > 0 && !held) continue;
          await new Promise<void>((resolve) => {
            // Held back below the slots: look again once the loop has been measured anew.
            const timer = setTimeout(resolve, held ? LOAD_WINDOW_MS : 250);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = undefined;
        }
      })();
    },
    async stop(timeoutMs) {
      if (working) {
        working = false;
        poke();
        await loop;
        const deadline = new Promise((resolve) => setTimeout(resolve, timeoutMs).unref());
        await Promise.race([Promise.allSettled([...running]), deadline]);
      }
      await boss.stop({ graceful: true, timeout: timeoutMs, close: true });
    },
  };
}
