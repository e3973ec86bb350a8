import { PRUNE_AUDIT, recordAudit } from '../audit/audit.js';
import type { Db, Queryable } from '../db/db.js';
import { IDEMPOTENCY_TTL_HOURS } from '../idempotency/idempotency.js';

/** Rows one batch deletes at most: one short transaction each (docs/operations.md, "Data lifecycle"). */
export const PRUNE_BATCH_SIZE = 200;

/** What one {@link pruneBefore} deleted, and how long its longest batch held its locks. */
export interface PruneResult {
  /** Top-level runs deleted, each with its whole tree (child runs, events and approvals go with it). */
  runs: number;
  /** Approvals made outside a run (MCP) deleted. */
  approvals: number;
  /** Expired Idempotency-Key records deleted. */
  idempotencyKeys: number;
  /** Ended console sessions deleted. */
  consoleSessions: number;
  /** Audit rows older than the audit retention deleted. */
  auditRows: number;
  /** Transactions (batches) committed. */
  batches: number;
  /** The longest batch's transaction, in milliseconds: the longest any row lock of the pruning was held. */
  longestBatchMs: number;
}

/** Options of {@link pruneBefore}. */
export interface PruneOptions {
  /** Rows a batch deletes at most (default {@link PRUNE_BATCH_SIZE}). */
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

/**
 * Deletes what the retention keeps no longer: top-level runs (with their whole tree) and approvals made outside a run
 * that ended before `cutoff`, plus expired Idempotency-Keys and console sessions, in batches of at most `batchSize`
 * rows, each its own short transaction. Never deletes a run that is Running or waiting, nor one whose tree holds one.
 */
export async function pruneBefore(db: Db, cutoff: Date | null, options: PruneOptions = {}): Promise<PruneResult> {
  const size = options.batchSize ?? PRUNE_BATCH_SIZE;
  const maxBatches = options.maxBatches ?? Number.POSITIVE_INFINITY;
  const result: PruneResult = {
    runs: 0,
    approvals: 0,
    idempotencyKeys: 0,
    consoleSessions: 0,
    auditRows: 0,
    batches: 0,
    longestBatchMs: 0,
  };
  const more = () => result.batches < maxBatches && !(options.stopped?.() ?? false);
  // One batch: one transaction, timed from BEGIN to COMMIT (every lock it takes is held at most that long).
  // `audit`: the deletion is recorded, as the system's, in its own batch's transaction (docs/audit.md).
  const batch = async (
    table: string,
    text: string,
    params: unknown[],
    audit?: (tx: Queryable, rows: number) => Promise<void>,
  ): Promise<number> => {
    const started = performance.now();
    const rows = await db.transaction(async (tx) => {
      const deleted = (await tx.query(text, params)).rowCount;
      if (deleted > 0) await audit?.(tx, deleted);
      return deleted;
    });
    const ms = performance.now() - started;
    result.batches++;
    result.longestBatchMs = Math.max(result.longestBatchMs, ms);
    options.onBatch?.({ table, rows, ms });
    return rows;
  };
  const { rows: namespaces } = await db.query<{ name: string }>('SELECT name FROM mt_namespaces ORDER BY name');
  const pruned =
    (namespace: string, action: 'runs.pruned' | 'approvals.pruned', what: 'runs' | 'approvals') =>
    (tx: Queryable, rows: number) =>
      recordAudit(tx, {
        actor: { kind: 'system', via: options.via ?? 'retention' },
        requestId: null,
        namespace,
        action,
        target: { kind: 'namespace', id: namespace },
        after: { [what]: rows, endedBefore: cutoff?.toISOString() },
      });
  for (const { name } of cutoff === null ? [] : namespaces) {
    while (more()) {
      const deleted = await batch('mt_runs', PRUNE_RUNS, [name, cutoff, size], pruned(name, 'runs.pruned', 'runs'));
      result.runs += deleted;
      if (deleted < size) break;
    }
    while (more()) {
      const deleted = await batch(
        'mt_approvals',
        PRUNE_APPROVALS,
        [name, cutoff, size],
        pruned(name, 'approvals.pruned', 'approvals'),
      );
      result.approvals += deleted;
      if (deleted < size) break;
    }
  }
  while (options.auditBefore !== undefined && more()) {
    const deleted = await batch('mt_audit', PRUNE_AUDIT, [options.auditBefore, size]);
    result.auditRows += deleted;
    if (deleted < size) break;
  }
  while (more()) {
    const deleted = await batch('mt_idempotency_keys', PRUNE_IDEMPOTENCY, [IDEMPOTENCY_TTL_HOURS, size]);
    result.idempotencyKeys += deleted;
    if (deleted < size) break;
  }
  while (more()) {
    const deleted = await batch('mt_console_sessions', PRUNE_SESSIONS, [size]);
    result.consoleSessions += deleted;
    if (deleted < size) break;
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
        if (pruned.runs + pruned.approvals + pruned.idempotencyKeys + pruned.consoleSessions + pruned.auditRows > 0) {
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
