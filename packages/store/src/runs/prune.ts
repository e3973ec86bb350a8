import { deleteWithSystemAudit, PRUNE_AUDIT } from '../audit/audit.js';
import type { Db } from '../db/db.js';
import { IDEMPOTENCY_TTL_HOURS } from '../idempotency/idempotency.js';

/** Rows one batch deletes at most: one short transaction each (docs/operations.md, "Data lifecycle"). */
export const PRUNE_BATCH_SIZE = 200;
/**
 * How long a batch's transaction should last at most: a batch that took longer halves the next one (down to
 * {@link PRUNE_MIN_BATCH_SIZE} rows), one that took under half of it doubles the next (up to the batch size). Runs with
 * long histories (many events a run) or a loaded database then still hold their locks briefly (decision 0251).
 */
export const PRUNE_BATCH_MS = 50;
/** The fewest rows a batch asks for, however slow the batches are. */
export const PRUNE_MIN_BATCH_SIZE = 10;
/** The rows the first batch of a pass asks for (at most the batch size): a pass starts small and grows. */
export const PRUNE_FIRST_BATCH_SIZE = 50;

/** What one {@link pruneBefore} deleted, and how long its longest batch held its locks. */
export interface PruneResult {
  /** Top-level runs deleted, each with its whole tree (child runs, events and approvals go with it). */
  runs: number;
  /** Approvals made outside a run (MCP) deleted. */
  approvals: number;
  /** Expired Idempotency-Key records deleted. */
  idempotencyKeys: number;
  /** Connect links that expired more than a day before (used or not). */
  connectLinks: number;
  /** Ended console sessions deleted. */
  consoleSessions: number;
  /** Webhook deliveries Delivered or Failed before the cutoff (docs/notifications.md). */
  webhookDeliveries: number;
  /** Ticks of schedules recorded before the cutoff (never a schedule's latest, its anchor, nor a queued one). */
  scheduleTicks: number;
  /** Deliveries of inbound webhooks received before the cutoff (a replay of one after it would start a run). */
  triggerDeliveries: number;
  /** Audit rows older than the audit retention deleted. */
  auditRows: number;
  /** Transactions (batches) committed. */
  batches: number;
  /**
   * The longest batch, in milliseconds, from its statement's sending to its answer: an upper bound of the longest any
   * row lock of the pruning was held.
   */
  longestBatchMs: number;
}

/** Options of {@link pruneBefore}. */
export interface PruneOptions {
  /** Rows a batch deletes at most (default {@link PRUNE_BATCH_SIZE}); fewer after slow batches ({@link PRUNE_BATCH_MS}). */
  batchSize?: number;
  /** Stop after this many batches (a bound on one pass; default unbounded: until nothing is left). */
  maxBatches?: number;
  /** Checked between batches: true stops the pass (a process shutting down). */
  stopped?: () => boolean;
  /** Audit rows before this instant are deleted too (default: none; `MT_AUDIT_RETENTION_DAYS`). */
  auditBefore?: Date;
  /** Who prunes, as the audit rows of the deletions name it: `mt runs-prune` or the retention job (the default). */
  via?: 'runs-prune' | 'retention';
  /** Told each batch's rows and duration (tests, logs). */
  onBatch?: (batch: { table: string; rows: number; ms: number }) => void;
}

// A top-level run ended before the cutoff whose whole tree has ended: the run row and every descendant are deleted
// together (mt_runs.parent_run_id, mt_run_events.run_id and mt_approvals.run_id are ON DELETE CASCADE). A run that is
// Running or waits (PendingApproval, WaitingForInput), or whose tree still holds one, is never chosen. Rows another
// transaction holds are skipped (SKIP LOCKED): the pruning never waits for a worker, and a worker never waits long for
// it. The scan uses mt_runs_namespace_created (namespace, created_at): a run is chosen only when it started and last
// changed before the cutoff.
const PRUNE_RUNS =
  'DELETE FROM mt_runs WHERE id IN (' +
  'SELECT r.id FROM mt_runs r ' +
  'WHERE r.namespace = $1 AND r.created_at < $2 AND r.updated_at < $2 AND r.parent_run_id IS NULL ' +
  "AND r.status IN ('Completed', 'Failed', 'Cancelled') " +
  'AND NOT EXISTS (' +
  'WITH RECURSIVE tree (id, status) AS (' +
  'SELECT c.id, c.status FROM mt_runs c WHERE c.parent_run_id = r.id ' +
  'UNION ALL SELECT c.id, c.status FROM mt_runs c JOIN tree t ON c.parent_run_id = t.id) ' +
  "SELECT 1 FROM tree WHERE tree.status NOT IN ('Completed', 'Failed', 'Cancelled')) " +
  'ORDER BY r.created_at LIMIT $3 FOR UPDATE OF r SKIP LOCKED) RETURNING 1';

// Approvals made outside a run (MCP) once answered or past their expiry, created before the cutoff.
const PRUNE_APPROVALS =
  'DELETE FROM mt_approvals WHERE id IN (' +
  'SELECT id FROM mt_approvals WHERE namespace = $1 AND run_id IS NULL AND created_at < $2 ' +
  "AND (status <> 'Pending' OR expires_at < now()) LIMIT $3 FOR UPDATE SKIP LOCKED) RETURNING 1";

/** `deleteSql` (a `DELETE ... RETURNING`) answering one row, `rows`: how many it deleted. */
const counted = (deleteSql: string) => `WITH deleted AS (${deleteSql}) SELECT count(*)::int AS rows FROM deleted`;

// Each with its audit row, in one statement ($4-$7: via, action, the count's key, endedBefore).
const PRUNE_RUNS_AUDITED = deleteWithSystemAudit(PRUNE_RUNS, 4);
const PRUNE_APPROVALS_AUDITED = deleteWithSystemAudit(PRUNE_APPROVALS, 4);

// Idempotency-Key records past their 24 h (a request's claim already purges its own namespace's; this reaches the
// namespaces nobody writes to any more).
const PRUNE_IDEMPOTENCY =
  'DELETE FROM mt_idempotency_keys WHERE (namespace, api_key_id, idem_key) IN (' +
  'SELECT namespace, api_key_id, idem_key FROM mt_idempotency_keys ' +
  'WHERE created_at < now() - make_interval(hours => $1) LIMIT $2 FOR UPDATE SKIP LOCKED) RETURNING 1';

// Console sessions past their end (a sign-in purges them too; this reaches a console nobody signs in to).
const PRUNE_SESSIONS =
  'DELETE FROM mt_console_sessions WHERE token_hash IN (' +
  'SELECT token_hash FROM mt_console_sessions WHERE expires_at < now() LIMIT $1 FOR UPDATE SKIP LOCKED) RETURNING 1';

// Connect links a day past their expiry, used or not (a used one is kept that long so a replay is told link-used).
const PRUNE_TICKS =
  'DELETE FROM mt_schedule_ticks WHERE ctid IN (' +
  "SELECT t.ctid FROM mt_schedule_ticks t WHERE t.namespace = $1 AND t.recorded_at < $2 AND t.status <> 'queued' " +
  'AND t.tick < (SELECT max(l.tick) FROM mt_schedule_ticks l WHERE l.namespace = t.namespace AND l.schedule = t.schedule) ' +
  'LIMIT $3 FOR UPDATE SKIP LOCKED) RETURNING 1';

// A chaining trigger's delivery still owed (`pending`, schema 36) is kept: the chaining loop settles it (refused, its
// run gone), so none is lost silently.
const PRUNE_DELIVERIES =
  'DELETE FROM mt_trigger_deliveries WHERE ctid IN (' +
  "SELECT ctid FROM mt_trigger_deliveries WHERE namespace = $1 AND received_at < $2 AND status <> 'pending' " +
  'LIMIT $3 FOR UPDATE SKIP LOCKED) RETURNING 1';

const PRUNE_CONNECT_LINKS =
  'DELETE FROM mt_connect_links WHERE id IN (' +
  "SELECT id FROM mt_connect_links WHERE expires_at < now() - interval '1 day' LIMIT $1 FOR UPDATE SKIP LOCKED) " +
  'RETURNING 1';

// Webhook deliveries that ended (Delivered or Failed) and were made before the cutoff: the endpoints' delivery logs.
const PRUNE_WEBHOOK_DELIVERIES =
  'DELETE FROM mt_webhook_deliveries WHERE id IN (' +
  "SELECT id FROM mt_webhook_deliveries WHERE status <> 'Pending' AND created_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED) " +
  'RETURNING 1';
const PRUNE_AUDIT_COUNTED = counted(PRUNE_AUDIT);
const PRUNE_IDEMPOTENCY_COUNTED = counted(PRUNE_IDEMPOTENCY);
const PRUNE_SESSIONS_COUNTED = counted(PRUNE_SESSIONS);
const PRUNE_CONNECT_LINKS_COUNTED = counted(PRUNE_CONNECT_LINKS);
const PRUNE_WEBHOOK_DELIVERIES_COUNTED = counted(PRUNE_WEBHOOK_DELIVERIES);
const PRUNE_TICKS_COUNTED = counted(PRUNE_TICKS);
const PRUNE_DELIVERIES_COUNTED = counted(PRUNE_DELIVERIES);

/**
 * Deletes what the retention keeps no longer: top-level runs (with their whole tree) and approvals made outside a run
 * that ended before `cutoff`, and the webhook deliveries that ended before it, plus expired Idempotency-Keys, console sessions and connect links, in batches of at most `batchSize`
 * rows, each its own short transaction. Never deletes a run that is Running or waiting, nor one whose tree holds one.
 */
export async function pruneBefore(db: Db, cutoff: Date | null, options: PruneOptions = {}): Promise<PruneResult> {
  const most = options.batchSize ?? PRUNE_BATCH_SIZE;
  // The rows the next batch asks for: from PRUNE_FIRST_BATCH_SIZE, halved after a batch slower than PRUNE_BATCH_MS,
  // doubled after a full one under half of it.
  let size = Math.min(most, PRUNE_FIRST_BATCH_SIZE);
  const maxBatches = options.maxBatches ?? Number.POSITIVE_INFINITY;
  const result: PruneResult = {
    runs: 0,
    approvals: 0,
    idempotencyKeys: 0,
    connectLinks: 0,
    consoleSessions: 0,
    webhookDeliveries: 0,
    scheduleTicks: 0,
    triggerDeliveries: 0,
    auditRows: 0,
    batches: 0,
    longestBatchMs: 0,
  };
  const more = () => result.batches < maxBatches && !(options.stopped?.() ?? false);
  // One batch of `size` rows at most: one statement, a transaction of its own (the DELETE with its audit row), so
  // every lock it takes is held only while the database executes and commits it, with no round trip to this process
  // in between. Timed from its sending to its answer: an upper bound of how long its locks were held (this process's
  // own delays count too). Its time sets the next batch's size. `params(size)`: the statement's parameters for that
  // size. Resolves whether the table may hold more (the batch came full).
  const batch = async (
    table: string,
    text: string,
    params: (size: number) => unknown[],
  ): Promise<{ rows: number; full: boolean }> => {
    const asked = size;
    const started = performance.now();
    const answer = await db.query<{ rows: number }>(text, params(asked));
    const ms = performance.now() - started;
    const rows = Number(answer.rows[0]?.rows ?? 0);
    result.batches++;
    result.longestBatchMs = Math.max(result.longestBatchMs, ms);
    if (ms > PRUNE_BATCH_MS) size = Math.max(PRUNE_MIN_BATCH_SIZE, Math.floor(asked / 2));
    else if (ms < PRUNE_BATCH_MS / 2 && rows === asked) size = Math.min(most, asked * 2);
    options.onBatch?.({ table, rows, ms });
    return { rows, full: rows === asked };
  };
  const { rows: namespaces } = await db.query<{ name: string }>('SELECT name FROM mt_namespaces ORDER BY name');
  // The deletion is recorded, as the system's, in its own batch's statement (docs/audit.md).
  const via = options.via ?? 'retention';
  const endedBefore = cutoff?.toISOString() ?? null;
  for (const { name } of cutoff === null ? [] : namespaces) {
    while (more()) {
      const { rows, full } = await batch('mt_runs', PRUNE_RUNS_AUDITED, (n) => [
        name,
        cutoff,
        n,
        via,
        'runs.pruned',
        'runs',
        endedBefore,
      ]);
      result.runs += rows;
      if (!full) break;
    }
    while (more()) {
      const { rows, full } = await batch('mt_approvals', PRUNE_APPROVALS_AUDITED, (n) => [
        name,
        cutoff,
        n,
        via,
        'approvals.pruned',
        'approvals',
        endedBefore,
      ]);
      result.approvals += rows;
      if (!full) break;
    }
    while (more()) {
      const { rows, full } = await batch('mt_schedule_ticks', PRUNE_TICKS_COUNTED, (n) => [name, cutoff, n]);
      result.scheduleTicks += rows;
      if (!full) break;
    }
    while (more()) {
      const { rows, full } = await batch('mt_trigger_deliveries', PRUNE_DELIVERIES_COUNTED, (n) => [name, cutoff, n]);
      result.triggerDeliveries += rows;
      if (!full) break;
    }
  }
  while (cutoff !== null && more()) {
    const { rows, full } = await batch('mt_webhook_deliveries', PRUNE_WEBHOOK_DELIVERIES_COUNTED, (n) => [cutoff, n]);
    result.webhookDeliveries += rows;
    if (!full) break;
  }
  while (options.auditBefore !== undefined && more()) {
    const { rows, full } = await batch('mt_audit', PRUNE_AUDIT_COUNTED, (n) => [options.auditBefore, n]);
    result.auditRows += rows;
    if (!full) break;
  }
  while (more()) {
    const { rows, full } = await batch('mt_idempotency_keys', PRUNE_IDEMPOTENCY_COUNTED, (n) => [
      IDEMPOTENCY_TTL_HOURS,
      n,
    ]);
    result.idempotencyKeys += rows;
    if (!full) break;
  }
  while (more()) {
    const { rows, full } = await batch('mt_console_sessions', PRUNE_SESSIONS_COUNTED, (n) => [n]);
    result.consoleSessions += rows;
    if (!full) break;
  }
  while (more()) {
    const { rows, full } = await batch('mt_connect_links', PRUNE_CONNECT_LINKS_COUNTED, (n) => [n]);
    result.connectLinks += rows;
    if (!full) break;
  }
  return result;
}

/** Options of {@link startRetention}. */
export interface RetentionOptions {
  db: Db;
  /** How long ended runs and answered approvals are kept, in milliseconds (undefined: forever). */
  retentionMs: number | undefined;
  /** How long audit rows are kept, in milliseconds (undefined: forever; `MT_AUDIT_RETENTION_DAYS`). */
  auditRetentionMs?: number;
  /** Time between passes (default one hour); the first pass starts after `firstDelayMs` (default one minute). */
  intervalMs?: number;
  firstDelayMs?: number;
  /** The clock the cutoff is taken from (tests move it); default `Date.now`. */
  now?: () => number;
  batchSize?: number;
  /** Told the outcome of every pass the timer runs (tests). */
  onPass?: (result: PruneResult) => void;
  /** Told each batch's table, rows and duration (tests, benches). */
  onBatch?: PruneOptions['onBatch'];
  logger?: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
  };
}

/** The background retention job of one process. */
export interface Retention {
  /** Runs one pass now (the timer's pass, or a test's); resolves with what it deleted. */
  runOnce(): Promise<PruneResult>;
  /** Stops the timer and waits for a pass under way to end its current batch. */
  close(): Promise<void>;
}

/** The default time between retention passes: one hour. */
export const RETENTION_INTERVAL_MS = 3_600_000;

/**
 * Starts the retention job: a pass every `intervalMs` deletes what ended more than `retentionMs` ago
 * ({@link pruneBefore}). A failed pass (the database unreachable) is logged and the next one tries again; passes never
 * overlap in one process, and processes may run theirs at once (SKIP LOCKED: each takes other rows or none).
 */
export function startRetention(options: RetentionOptions): Retention {
  const now = options.now ?? Date.now;
  let closed = false;
  let running: Promise<PruneResult> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const runOnce = (): Promise<PruneResult> => {
    const at = now();
    running ??= pruneBefore(options.db, options.retentionMs === undefined ? null : new Date(at - options.retentionMs), {
      stopped: () => closed,
      ...(options.auditRetentionMs === undefined ? {} : { auditBefore: new Date(at - options.auditRetentionMs) }),
      ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
      ...(options.onBatch === undefined ? {} : { onBatch: options.onBatch }),
    }).finally(() => {
      running = undefined;
    });
    return running;
  };
  const schedule = (delay: number) => {
    if (closed) return;
    timer = setTimeout(async () => {
      try {
        const pruned = await runOnce();
        options.onPass?.(pruned);
        if (
          pruned.runs +
            pruned.approvals +
            pruned.idempotencyKeys +
            pruned.consoleSessions +
            pruned.connectLinks +
            pruned.webhookDeliveries +
            pruned.scheduleTicks +
            pruned.triggerDeliveries +
            pruned.auditRows >
          0
        ) {
          options.logger?.info({ ...pruned }, 'retention: deleted what ended before the retention period');
        }
      } catch (error) {
        options.logger?.warn(
          { err: error instanceof Error ? error.message : String(error) },
          'retention: the pass failed; the next one tries again',
        );
      }
      schedule(options.intervalMs ?? RETENTION_INTERVAL_MS);
    }, delay);
    timer.unref();
  };
  schedule(options.firstDelayMs ?? 60_000);
  return {
    runOnce,
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await running?.catch(() => undefined);
    },
  };
}
