import type { Gateway } from '@maitento/gateway';
import type {
  Db,
  NewRunEvent,
  Queryable,
  RunEventRecord,
  RunRecord,
  RunStatusChange,
  SecretKeys,
} from '@maitento/store';
import type { ModelResolver } from '../models/resolve.js';
import type { CallReads } from '../runs/call-reads.js';
import type { PinnedSet } from '../runs/pinned.js';

/** What the engine gives every run it executes. */
export interface EngineDeps {
  db: Db;
  secretKey: SecretKeys;
  /** Pinned versions' `enabled` and credentials, per tool call (the server's cache when it made the engine). */
  reads: CallReads;
  gateway: Gateway;
  models: ModelResolver;
  maxSteps: number;
  modelRetries: number;
  approvalTtlMs: number | undefined;
  /** The largest a run's inputs may be, in bytes of their JSON text. */
  runInputMaxBytes: number;
}

/** Thrown when the worker no longer holds the run (another took it over, or it ended meanwhile). */
export class LeaseLost extends Error {
  constructor(runId: string) {
    super(`run ${runId} is no longer held by this worker`);
  }
}

/** One run as a worker executes it. */
export interface RunContext extends EngineDeps {
  run: RunRecord;
  pinned: PinnedSet;
  /** Aborted when the run is cancelled or the worker stops. */
  signal: AbortSignal;
  /**
   * Awaits a call outside the engine (the model, a tool through the gateway): meanwhile the run does not count
   * against the worker's limit on runs doing engine work.
   */
  outside<T>(call: Promise<T>): Promise<T>;
  /**
   * Appends events (and a status change) fenced by this worker's lease; with `expectSeq`, only if no
   * other event was stored since (a waiting run must not miss an answer or a cancel). Resolves false
   * when that extra condition failed; throws {@link LeaseLost} when the lease is gone. `tx` joins the
   * caller's transaction.
   */
  write(events: NewRunEvent[], change?: RunStatusChange, expectSeq?: number, tx?: Queryable): Promise<boolean>;
  /**
   * The run's events: read once, then kept up to date by this worker's own writes; read again whenever a
   * write's seq shows that someone else appended meanwhile (an answer), or a write joined a transaction.
   */
  events(): Promise<RunEventRecord[]>;
}
