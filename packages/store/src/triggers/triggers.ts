import type { Trigger } from '@maitento/lang';
import type { Queryable } from '../db/db.js';
import { iso } from '../internal/rows.js';

// The store's side of inbound webhooks (docs/schedules-and-triggers.md, sql/0029_schedules_and_triggers.sql): the
// trigger a hook's URL names, one row a delivery keyed by its event id (what the first answered, for a replay), and
// the count of the deliveries refused before anything was stored.

/** The latest enabled version of a trigger, or undefined. */
export async function latestTrigger(
  q: Queryable,
  namespace: string,
  name: string,
): Promise<{ version: number; trigger: Trigger; interactionVersion: number } | undefined> {
  const { rows } = await q.query<{ version: number; resource: Trigger; pins: { kind: string; version: number }[] }>(
    "SELECT version, resource, pins FROM mt_resource_versions WHERE namespace = $1 AND kind = 'trigger' AND name = $2 " +
      'AND enabled ORDER BY version DESC LIMIT 1',
    [namespace, name],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  return {
    version: row.version,
    trigger: row.resource,
    interactionVersion: row.pins.find((pin) => pin.kind === 'interaction')?.version ?? 1,
  };
}

/** Counts a delivery refused before anything was stored (`signature`, `timestamp`, `size`, ...). */
export async function countTriggerRejection(
  q: Queryable,
  namespace: string,
  trigger: string,
  reason: string,
): Promise<void> {
  await q.query(
    'INSERT INTO mt_trigger_rejections (namespace, trigger, reason, count) VALUES ($1, $2, $3, 1) ' +
      'ON CONFLICT (namespace, trigger, reason) DO UPDATE SET count = mt_trigger_rejections.count + 1, last_at = now()',
    [namespace, trigger, reason],
  );
}

/**
 * One delivery of a trigger as recorded: a webhook's (its event id the sender's), or a chaining trigger's (its event id
 * the ended run's id; `pending` until its run starts or it is refused, and no answer: nobody asked).
 */
export interface TriggerDelivery {
  eventId: string;
  version: number;
  status: 'pending' | 'started' | 'refused';
  runId: string | null;
  detail: string | null;
  /** The error code of a refused delivery (schema 36; null before it, and for a webhook's, read from its answer). */
  code?: string | null;
  answerStatus: number | null;
  answer: unknown;
  receivedAt: string;
}

interface DeliveryRow {
  event_id: string;
  version: number;
  status: 'pending' | 'started' | 'refused';
  run_id: string | null;
  detail: string | null;
  code: string | null;
  answer_status: number | null;
  answer: unknown;
  received_at: Date;
}

const deliveryOf = (row: DeliveryRow): TriggerDelivery => ({
  eventId: row.event_id,
  version: row.version,
  status: row.status,
  runId: row.run_id,
  detail: row.detail,
  code: row.code ?? codeOf(row.answer),
  answerStatus: row.answer_status,
  answer: row.answer,
  receivedAt: iso(row.received_at),
});

const codeOf = (answer: unknown): string | null =>
  typeof answer === 'object' && answer !== null && typeof (answer as { code?: unknown }).code === 'string'
    ? (answer as { code: string }).code
    : null;

const COLUMNS = 'event_id, version, status, run_id, detail, code, answer_status, answer, received_at';

/** The delivery of `eventId`, when one was recorded. */
export async function findDelivery(
  q: Queryable,
  namespace: string,
  trigger: string,
  eventId: string,
): Promise<TriggerDelivery | undefined> {
  const { rows } = await q.query<DeliveryRow>(
    `SELECT ${COLUMNS} FROM mt_trigger_deliveries WHERE namespace = $1 AND trigger = $2 AND event_id = $3`,
    [namespace, trigger, eventId],
  );
  return rows[0] && deliveryOf(rows[0]);
}

/** Records a delivery unless its event id was recorded first; true when this call recorded it. */
export async function recordDelivery(
  q: Queryable,
  namespace: string,
  trigger: string,
  delivery: Omit<TriggerDelivery, 'receivedAt'>,
): Promise<boolean> {
  const { rowCount } = await q.query(
    'INSERT INTO mt_trigger_deliveries (namespace, trigger, event_id, version, status, run_id, detail, answer_status, answer) ' +
      'VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING',
    [
      namespace,
      trigger,
      delivery.eventId,
      delivery.version,
      delivery.status,
      delivery.runId,
      delivery.detail,
      delivery.answerStatus,
      JSON.stringify(delivery.answer),
    ],
  );
  return (rowCount ?? 0) > 0;
}

/** The latest deliveries of a trigger, newest first. */
export async function listDeliveries(
  q: Queryable,
  namespace: string,
  trigger: string,
  limit: number,
): Promise<TriggerDelivery[]> {
  const { rows } = await q.query<DeliveryRow>(
    `SELECT ${COLUMNS} FROM mt_trigger_deliveries WHERE namespace = $1 AND trigger = $2 ORDER BY received_at DESC LIMIT $3`,
    [namespace, trigger, limit],
  );
  return rows.map(deliveryOf);
}

/** The counts of a trigger's deliveries refused before anything was stored, by reason. */
export async function triggerRejections(
  q: Queryable,
  namespace: string,
  trigger: string,
): Promise<Record<string, number>> {
  const { rows } = await q.query<{ reason: string; count: string }>(
    'SELECT reason, count FROM mt_trigger_rejections WHERE namespace = $1 AND trigger = $2',
    [namespace, trigger],
  );
  return Object.fromEntries(rows.map((row) => [row.reason, Number(row.count)]));
}

/** A chaining trigger's delivery owed: the trigger (its version when the run ended) and the ended run. */
export interface PendingChainDelivery {
  namespace: string;
  trigger: string;
  version: number;
  /** The ended run's id. */
  runId: string;
  receivedAt: string;
}

/**
 * The chaining triggers' deliveries still owed (written `pending` with the end of their run), oldest first: at most
 * `limit` of them. Several processes may read the same: the start's claim ({@link claimChainDelivery}) decides.
 */
export async function pendingChainDeliveries(q: Queryable, limit: number): Promise<PendingChainDelivery[]> {
  const { rows } = await q.query<{
    namespace: string;
    trigger: string;
    version: number;
    event_id: string;
    received_at: Date;
  }>(
    'SELECT namespace, trigger, version, event_id, received_at FROM mt_trigger_deliveries ' +
      "WHERE status = 'pending' ORDER BY received_at LIMIT $1",
    [limit],
  );
  return rows.map((row) => ({
    namespace: row.namespace,
    trigger: row.trigger,
    version: row.version,
    runId: row.event_id,
    receivedAt: iso(row.received_at),
  }));
}

/**
 * Turns a pending chain delivery `started` with its run, in the run's own transaction (the engine's start `claim`):
 * true when this call took it. A second process waits for the first's transaction on the row's lock and then finds it
 * started (false: its start stores nothing); if the first died before its commit, the row is still pending and the
 * second takes it.
 */
export async function claimChainDelivery(
  tx: Queryable,
  key: { namespace: string; trigger: string; runId: string },
  runId: string,
): Promise<boolean> {
  const { rowCount } = await tx.query(
    "UPDATE mt_trigger_deliveries SET status = 'started', run_id = $4 " +
      "WHERE namespace = $1 AND trigger = $2 AND event_id = $3 AND status = 'pending'",
    [key.namespace, key.trigger, key.runId, runId],
  );
  return (rowCount ?? 0) > 0;
}

/** Refuses a pending chain delivery with the error that stopped it (the depth limit, the mapping); true when it was. */
export async function refuseChainDelivery(
  q: Queryable,
  key: { namespace: string; trigger: string; runId: string },
  error: { code: string; message: string },
): Promise<boolean> {
  const { rowCount } = await q.query(
    "UPDATE mt_trigger_deliveries SET status = 'refused', code = $4, detail = $5 " +
      "WHERE namespace = $1 AND trigger = $2 AND event_id = $3 AND status = 'pending'",
    [key.namespace, key.trigger, key.runId, error.code, error.message],
  );
  return (rowCount ?? 0) > 0;
}
