import type { Db } from '@maitento/store';
import { PgBoss } from 'pg-boss';

/** The pg-boss queue runs are executed through. */
export const RUN_QUEUE = 'mt-runs';

/** The job queue of runs: a run id in, a worker's handler out. */
export interface RunQueue {
  /** Queues the run for a worker (a duplicate job is harmless: the run's lease admits one worker). */
  send(runId: string): Promise<void>;
  /** Starts handling jobs, `concurrency` at a time. */
  work(concurrency: number, handler: (runId: string) => Promise<void>): Promise<void>;
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
  if ((await boss.getQueue(RUN_QUEUE)) === null) {
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
  }
  let working = false;
  return {
    async send(runId) {
      await boss.send(RUN_QUEUE, { runId });
    },
    async work(concurrency, handler) {
      working = true;
      await boss.work<{ runId: string }>(
        RUN_QUEUE,
        { localConcurrency: concurrency, batchSize: 1, pollingIntervalSeconds: 0.5 },
        async (jobs) => {
          for (const job of jobs) await handler(job.data.runId);
        },
      );
    },
    async stop(timeoutMs) {
      if (working) await boss.offWork(RUN_QUEUE, { wait: true }).catch(onError);
      await boss.stop({ graceful: true, timeout: timeoutMs, close: true });
    },
  };
}
