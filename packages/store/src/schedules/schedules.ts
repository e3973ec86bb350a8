import type { Schedule } from '@maitento/lang';
import { TERMINAL_RUN_STATUSES } from '@maitento/sdk/wire';
import type { ScheduleTick } from '@maitento/sdk/wire';
import type { Queryable } from '../db/db.js';
import { iso } from '../internal/rows.js';
import { notifyWake, wakeTopics } from '../wake/notify.js';

// The store's side of schedules (docs/schedules-and-triggers.md): which version of each schedule ticks, its pause,
// and one row per tick taken (sql/0029_schedules.sql). A tick's row is the lock: whoever inserts it first owns the
// tick, in the transaction that starts its run.

/** The version of a schedule that ticks (its latest enabled one), with its pause and its latest tick. */
export interface TickingSchedule {
  namespace: string;
  name: string;
  version: number;
  schedule: Schedule;
  /** The interaction version pinned at deploy: the one each tick starts. */
  interactionVersion: number;
  /** When this version was deployed: ticks before it belong to the versions before it. */
  deployedAt: Date;
  paused: boolean;
  resumedAt: Date | null;
  lastTick: Date | null;
}

interface TickingRow {
  namespace: string;
  name: string;
  version: number;
  resource: Schedule;
  pins: { kind: string; name: string; version: number }[];
  created_at: Date;
  paused: boolean | null;
  resumed_at: Date | null;
  last_tick: Date | null;
}

/**
 * The latest enabled version of every schedule (of `namespace`, or of every namespace), with its pause and its
 * latest tick: what the scheduler ticks and what `GET /v1/schedules` lists.
 */
export async function tickingSchedules(q: Queryable, namespace?: string, name?: string): Promise<TickingSchedule[]> {
  const { rows } = await q.query<TickingRow>(
    'SELECT v.namespace, v.name, v.version, v.resource, v.pins, v.created_at, s.paused, s.resumed_at, ' +
      '(SELECT max(t.tick) FROM mt_schedule_ticks t WHERE t.namespace = v.namespace AND t.schedule = v.name) AS last_tick ' +
      'FROM (SELECT DISTINCT ON (namespace, name) namespace, name, version, resource, pins, created_at ' +
      "FROM mt_resource_versions WHERE kind = 'schedule' AND enabled " +
      'AND ($1::text IS NULL OR namespace = $1) AND ($2::text IS NULL OR name = $2) ' +
      'ORDER BY namespace, name, version DESC) v ' +
      'LEFT JOIN mt_schedule_states s ON s.namespace = v.namespace AND s.schedule = v.name ' +
      'ORDER BY v.namespace, v.name',
    [namespace ?? null, name ?? null],
  );
  return rows.map((row) => ({
    namespace: row.namespace,
    name: row.name,
    version: row.version,
    schedule: row.resource,
    interactionVersion: row.pins.find((pin) => pin.kind === 'interaction')?.version ?? 1,
    deployedAt: row.created_at,
    paused: row.paused ?? false,
    resumedAt: row.resumed_at,
    lastTick: row.last_tick,
  }));
}

/** One tick to record. */
export interface TickRow {
  namespace: string;
  schedule: string;
  tick: Date;
  version: number;
  status: ScheduleTick['status'];
  runId?: string;
  detail?: string;
}

/**
 * Records ticks that were taken by nobody yet; a tick another process recorded first is left as it is. Answers how
 * many were recorded here (for one tick: 1 when this call took it, 0 when another had).
 */
export async function recordTicks(q: Queryable, ticks: readonly TickRow[]): Promise<number> {
  if (ticks.length === 0) return 0;
  const { rowCount } = await q.query(
    'INSERT INTO mt_schedule_ticks (namespace, schedule, tick, version, status, run_id, detail) ' +
      'SELECT * FROM jsonb_to_recordset($1::jsonb) AS t(namespace text, schedule text, tick timestamptz, version int, ' +
      'status text, run_id uuid, detail text) ON CONFLICT DO NOTHING',
    [
      JSON.stringify(
        ticks.map((t) => ({
          namespace: t.namespace,
          schedule: t.schedule,
          tick: t.tick.toISOString(),
          version: t.version,
          status: t.status,
          run_id: t.runId ?? null,
          detail: t.detail ?? null,
        })),
      ),
    ],
  );
  return rowCount ?? 0;
}

/** Whether a run a tick of the schedule started has not ended yet. */
export async function scheduleRunActive(q: Queryable, namespace: string, schedule: string): Promise<boolean> {
  const { rows } = await q.query(
    'SELECT 1 FROM mt_schedule_ticks t JOIN mt_runs r ON r.id = t.run_id ' +
      "WHERE t.namespace = $1 AND t.schedule = $2 AND t.status = 'started' AND r.status <> ALL($3::text[]) LIMIT 1",
    [namespace, schedule, [...TERMINAL_RUN_STATUSES]],
  );
  return rows.length > 0;
}

/** Whether the schedule holds a queued tick. */
export async function scheduleQueued(q: Queryable, namespace: string, schedule: string): Promise<boolean> {
  const { rows } = await q.query(
    "SELECT 1 FROM mt_schedule_ticks WHERE namespace = $1 AND schedule = $2 AND status = 'queued' LIMIT 1",
    [namespace, schedule],
  );
  return rows.length > 0;
}

/** The queued ticks of every schedule (overlap "queue-one"): at most one a schedule. */
export async function queuedTicks(q: Queryable): Promise<{ namespace: string; schedule: string; tick: Date }[]> {
  const { rows } = await q.query<{ namespace: string; schedule: string; tick: Date }>(
    "SELECT namespace, schedule, tick FROM mt_schedule_ticks WHERE status = 'queued' ORDER BY tick",
  );
  return rows;
}

/**
 * Takes a queued tick to start `runId` for it, in the run's transaction: true for the one process whose update found
 * it still queued.
 */
export async function takeQueuedTick(
  q: Queryable,
  tick: { namespace: string; schedule: string; tick: Date },
  version: number,
  runId: string,
): Promise<boolean> {
  const { rowCount } = await q.query(
    "UPDATE mt_schedule_ticks SET status = 'started', run_id = $4, version = $5, recorded_at = now() " +
      "WHERE namespace = $1 AND schedule = $2 AND tick = $3 AND status = 'queued'",
    [tick.namespace, tick.schedule, tick.tick, runId, version],
  );
  return (rowCount ?? 0) > 0;
}

/** Marks a queued tick failed (its run could not start), unless another process took it. */
export async function failQueuedTick(
  q: Queryable,
  tick: { namespace: string; schedule: string; tick: Date },
  detail: string,
): Promise<void> {
  await q.query(
    "UPDATE mt_schedule_ticks SET status = 'failed', detail = $4, recorded_at = now() " +
      "WHERE namespace = $1 AND schedule = $2 AND tick = $3 AND status = 'queued'",
    [tick.namespace, tick.schedule, tick.tick, detail],
  );
}

/** Pauses or resumes a schedule (run it in a transaction: it notifies `schedules`); a resume sets the time before which no tick is made up for. */
export async function setSchedulePaused(
  q: Queryable,
  namespace: string,
  schedule: string,
  paused: boolean,
): Promise<void> {
  await q.query(
    'INSERT INTO mt_schedule_states (namespace, schedule, paused, resumed_at) VALUES ($1, $2, $3, CASE WHEN $3 THEN NULL ELSE now() END) ' +
      'ON CONFLICT (namespace, schedule) DO UPDATE SET paused = $3, ' +
      'resumed_at = CASE WHEN $3 THEN mt_schedule_states.resumed_at ELSE now() END, updated_at = now()',
    [namespace, schedule, paused],
  );
  // Every process's scheduler reads the schedules again at the commit.
  await notifyWake(q, wakeTopics.schedules);
}

interface TickHistoryRow {
  tick: Date;
  version: number;
  status: ScheduleTick['status'];
  run_id: string | null;
  detail: string | null;
  recorded_at: Date;
}

/** The latest ticks of a schedule, newest first. */
export async function listScheduleTicks(
  q: Queryable,
  namespace: string,
  schedule: string,
  limit: number,
): Promise<ScheduleTick[]> {
  const { rows } = await q.query<TickHistoryRow>(
    'SELECT tick, version, status, run_id, detail, recorded_at FROM mt_schedule_ticks ' +
      'WHERE namespace = $1 AND schedule = $2 ORDER BY tick DESC LIMIT $3',
    [namespace, schedule, limit],
  );
  return rows.map((row) => ({
    tick: iso(row.tick),
    version: row.version,
    status: row.status,
    runId: row.run_id,
    detail: row.detail,
    recordedAt: iso(row.recorded_at),
  }));
}
