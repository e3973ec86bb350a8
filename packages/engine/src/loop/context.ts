import type { Gateway, OAuthClient } from '@maitento/gateway';
import type { Db, NamespaceQuotas, RunRecord, SecretKeys } from '@maitento/store';
import type { AttemptJournal } from '../journal/journal.js';
import type { PriceTable } from '../models/prices.js';
import type { ModelResolver } from '../models/resolve.js';
import type { CallReads } from '../runs/call-reads.js';
import type { PinnedSet } from '../runs/pinned.js';
import type { OpsMetrics } from '../telemetry/ops-metrics.js';
import type { RunTelemetry } from '../telemetry/run-telemetry.js';
import type { RunQueue } from '../worker/queue.js';

/** What the engine gives every run it executes. */
export interface EngineDeps {
  db: Db;
  secretKey: SecretKeys;
  /** Pinned versions' `enabled` and credentials, per tool call (the server's cache when it made the engine). */
  reads: CallReads;
  gateway: Gateway;
  /** Refreshes OAuth2 connectors' access tokens; without it an expired token needs its person again. */
  oauth?: () => OAuthClient;
  /** The connect links' redirect URI (MT_PUBLIC_URL + /v1/connections/callback); without it no run waits to connect. */
  connectRedirectUri?: string;
  models: ModelResolver;
  /** What models' tokens cost (`MT_MODEL_PRICES`): each model response's `costUsd`. */
  prices: PriceTable;
  maxSteps: number;
  modelRetries: number;
  approvalTtlMs: number | undefined;
  /** The largest a run's inputs may be, in bytes of their JSON text. */
  runInputMaxBytes: number;
  /** Spans and metrics of runs (docs/telemetry.md); undefined when OpenTelemetry is off. */
  telemetry?: RunTelemetry;
  /** How deep agents may hand tasks to agents (a top run is 0 deep, its child 1). */
  maxDepth: number;
  /** The counters of `/metrics` (docs/operations.md); undefined when metrics are off. */
  metrics?: OpsMetrics;
}

/** Thrown at a step boundary when the worker stops: the run is handed on, not failed. */
export class HandedOn extends Error {
  constructor(runId: string) {
    super(`run ${runId} handed on: the worker is stopping`);
  }
}

/** One run as a worker executes it. */
export interface RunContext extends EngineDeps {
  run: RunRecord;
  pinned: PinnedSet;
  /** Aborted when the run is cancelled (and past the stop's drain deadline): tool calls, which a stop lets finish. */
  signal: AbortSignal;
  /** Aborted when the run is cancelled or the worker stops: model calls (asking again is safe). */
  modelSignal: AbortSignal;
  /**
   * Awaits a call outside the engine (the model, a tool through the gateway): meanwhile the run does not count
   * against the worker's limit on runs doing engine work.
   */
  outside<T>(call: Promise<T>): Promise<T>;
  /** The run's journal as this attempt writes it (fenced by its claim). */
  journal: AttemptJournal;
  /** Queues a run (a child this run starts), in the caller's transaction; `sent` after the commit. */
  queue: Pick<RunQueue, 'send' | 'sent'>;
  /** The namespace's quotas as this execution read them when it began (docs/quotas.md). */
  quotas?: NamespaceQuotas;
}
