import { createHash } from 'node:crypto';
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
  /** A schedule was deployed, paused or resumed: every scheduler reads the schedules again. */
  schedules: 'schedules',
  /** A knowledge base document waiting for its vectors was stored. */
  embeddings: 'embeddings',
  /** A webhook delivery was written (docs/notifications.md). */
  webhooks: 'webhooks',
  /** A run's end owed a chaining trigger a delivery (docs/schedules-and-triggers.md). */
  triggers: 'triggers',
  /**
   * The connect callback stored the connection of (namespace, provider, end user): an MCP call waiting on its URL
   * elicitation reads it again. A hash, so that any end user id fits NOTIFY's payload.
   */
  connection: (namespace: string, provider: string, endUser: string) =>
    `connection:${createHash('sha256')
      .update(JSON.stringify([namespace, provider, endUser]))
      .digest('hex')
      .slice(0, 32)}`,
} as const;

/** Notifies `topic` on `mt_wake`; run it in the writer's transaction (delivered at commit, not on rollback). */
export async function notifyWake(tx: Queryable, topic: string): Promise<void> {
  await tx.query('SELECT pg_notify($1, $2)', [WAKE_CHANNEL, topic]);
}
