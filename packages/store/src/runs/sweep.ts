import type { Queryable } from '../db/db.js';

/**
 * Milliseconds until the earliest of what a worker's sweep ends (the database's clock): a Pending approval's
 * `expires_at`, a waiting conversation's `idleUntil` (the `input-requested` event it waits on), a wait for an
 * authorisation's `expiresAt` (its `run-waiting`), a wait for a limit's window's `until` (its `limit-waiting`). Zero or less: due now;
 * null: nothing is pending. One statement, read-only: an idle worker asks it rarely (docs/architecture.md, "Timers").
 */
export async function nextSweepDueMs(db: Queryable): Promise<number | null> {
  const { rows } = await db.query<{ due_ms: number | null }>(
    'SELECT ceil(extract(epoch FROM least(' +
      "(SELECT min(expires_at) FROM mt_approvals WHERE status = 'Pending'), " +
      "(SELECT min((e.data->>'idleUntil')::timestamptz) FROM mt_runs r JOIN mt_run_events e ON e.run_id = r.id " +
      "AND e.seq = r.last_seq WHERE r.status = 'WaitingForInput' AND e.type = 'input-requested'), " +
      "(SELECT min((e.data->>'expiresAt')::timestamptz) FROM mt_runs r JOIN mt_run_events e ON e.run_id = r.id " +
      "AND e.seq = r.last_seq WHERE r.status = 'PendingAuthorization' AND e.type = 'run-waiting'), " +
      "(SELECT min((e.data->>'until')::timestamptz) FROM mt_runs r JOIN mt_run_events e ON e.run_id = r.id " +
      "AND e.seq = r.last_seq WHERE r.status = 'PendingLimit' AND e.type = 'limit-waiting')" +
      ') - now()) * 1000)::float8 AS due_ms',
  );
  const due = rows[0]?.due_ms;
  return due === null || due === undefined ? null : Number(due);
}
