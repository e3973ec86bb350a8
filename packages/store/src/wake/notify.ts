import type { Queryable } from '../db/db.js';

/** The PostgreSQL channel of every wake-up; the payload is the topic (`runs`, `run:<id>`, `key:<id>`, ...). */
export const WAKE_CHANNEL = 'mt_wake';

/** The topics waiters subscribe to and writers notify, built in one place. */
export const wakeTopics = {
  /** A run was queued or needs a worker. */
  runs: 'runs',
  /** An event was appended to run `id`. */
  run: (id: string) => `run:${id}`,
  /**
   * Run `id`'s cancel was requested: a topic of its own, so the worker holding the run is not woken by the run's
   * own appends (one read of the cancel flag a step saved).
   */
  cancel: (id: string) => `cancel:${id}`,
  /** Approval `id` was answered or expired. */
  approval: (id: string) => `approval:${id}`,
  /** API key `id` was deleted. */
  key: (id: string) => `key:${id}`,
  /** A deploy, a disable or an enable in `namespace`. */
  resources: (namespace: string) => `resources:${namespace}`,
  /** A knowledge base document waiting for its vectors was stored. */
  embeddings: 'embeddings',
} as const;

/** Notifies `topic` on `mt_wake`; run it in the writer's transaction (delivered at commit, not on rollback). */
export async function notifyWake(tx: Queryable, topic: string): Promise<void> {
  await tx.query('SELECT pg_notify($1, $2)', [WAKE_CHANNEL, topic]);
}
