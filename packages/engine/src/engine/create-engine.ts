import { type PriceTable, priceTableFromEnv } from '../models/prices.js';
import type { Gateway, OAuthClient } from '@maitento/gateway';
import type { Db, SecretKeys, StoreCache } from '@maitento/store';
import type { RunningEngine } from '../api/engine.js';
import { engineErrors } from '../errors.js';
import { type EngineLogger, silentLogger } from '../internal/logger.js';
import type { EngineDeps } from '../loop/context.js';
import { type ModelResolver, modelsFromEnvironment } from '../models/resolve.js';
import { openCallReads } from '../runs/call-reads.js';
import { PinnedLoader } from '../runs/pinned.js';
import { RunService } from '../runs/service.js';
import { openRunQueue, type RunWakeups } from '../worker/queue.js';
import { RunWorker } from '../worker/run-worker.js';
import { RunTelemetry, startProviders } from '../telemetry/index.js';
import type { OpsMetrics } from '../telemetry/ops-metrics.js';
import { engineSettingsFromEnv, telemetrySettingsFromEnv } from './settings.js';

/** How long a stop lets tool calls in flight finish by default: `MT_SHUTDOWN_GRACE_MS`'s default less its handover. */
export const DEFAULT_DRAIN_MS = 25_000;

/** Options of {@link createEngine}. */
export interface EngineOptions {
  /** The store (`pg` or `pglite`). */
  db: Db;
  /** The master key secrets are wrapped under, or the keyring of a rotation (as the server's). */
  secretKey: SecretKeys;
  /** The gateway tool calls go through. */
  gateway: Gateway;
  /** The process's OAuth 2 client (made on first use), which refreshes OAuth2 connectors' access tokens. */
  oauth?: () => OAuthClient;
  /**
   * The redirect URI of connect links (MT_PUBLIC_URL + /v1/connections/callback): with it (and `oauth`), a run whose
   * end user has no usable connection waits for them to connect (PendingAuthorization).
   */
  connectRedirectUri?: string;
  /**
   * The store cache tool calls read through (pinned versions, `enabled`, secrets); the caller closes it. The
   * server passes its own, so both share one cache. Default: one of the engine's own.
   */
  cache?: StoreCache;
  /** Execute runs in this process (default false: the engine only starts, reads and answers). */
  worker?: { concurrency?: number } | false;
  /** Where models come from (default: the environment, see docs/runs.md). */
  models?: ModelResolver;
  /** What models' tokens cost (default `MT_MODEL_PRICES`, read at the start: an unusable table stops it). */
  prices?: PriceTable;
  /** Model turns a run may take (default `MT_MAX_STEPS` or 20). */
  maxSteps?: number;
  /** How long an approval waits before the run fails (default `MT_APPROVAL_TTL` seconds; off when unset). */
  approvalTtlMs?: number;
  /**
   * The process's wake-ups (the store's `Wakeups`): the worker fetches on `runs` and learns of a cancel on
   * `cancel:<id>`. Without them (or while they are not listening) it polls every 2 s.
   */
  wakeups?: RunWakeups;
  /**
   * How long a stop waits for tool calls in flight before aborting them and handing their runs back (default
   * {@link DEFAULT_DRAIN_MS}; a shutdown passes its own through `stopWorker`, docs/operations.md "Shutdown").
   */
  drainMs?: number;
  /** How deep agents may hand tasks to agents (default `MT_RUN_MAX_DEPTH` or 3). */
  maxDepth?: number;
  /** Retries of a failed model request (default `MT_MODEL_RETRIES` or 2). */
  modelRetries?: number;
  /** The largest a run's inputs may be, in bytes of their JSON text (default `MT_RUN_INPUT_MAX_BYTES` or 256 KiB). */
  runInputMaxBytes?: number;
  /**
   * The process's OpenTelemetry, started by the caller with {@link startTelemetry} (so the server's direct tool calls
   * and the runs share one exporter); null: off. Default: started here from the environment. Either way the engine's
   * close flushes it.
   */
  telemetry?: RunTelemetry | null;
  /** The counters of `/metrics` (the server makes them when metrics are on); default none. */
  metrics?: OpsMetrics;
  logger?: EngineLogger;
}

/**
 * Starts the process's OpenTelemetry from the environment (docs/telemetry.md): undefined, and nothing loaded,
 * without an endpoint; rejects with `api:telemetry:protocol-unsupported` for a protocol other than OTLP over HTTP.
 */
export async function startTelemetry(logger?: EngineLogger): Promise<RunTelemetry | undefined> {
  const otel = await startProviders(telemetrySettingsFromEnv(), logger ?? silentLogger);
  return otel === undefined ? undefined : new RunTelemetry(otel);
}

/** Creates the run engine on `db`; with `worker`, this process also executes runs. */
export async function createEngine(options: EngineOptions): Promise<RunningEngine> {
  const log = options.logger ?? silentLogger;
  const settings = engineSettingsFromEnv();
  // OpenTelemetry: nothing is started without an endpoint (docs/telemetry.md); a bad protocol stops the start here.
  const telemetry = options.telemetry === undefined ? await startTelemetry(log) : (options.telemetry ?? undefined);
  const reads = await openCallReads(options.db, options.secretKey, options.cache);
  const deps: EngineDeps = {
    db: options.db,
    secretKey: options.secretKey,
    reads: reads.reads,
    gateway: options.gateway,
    models: options.models ?? modelsFromEnvironment(),
    prices: options.prices ?? priceTableFromEnv(),
    maxSteps: options.maxSteps ?? settings.maxSteps,
    modelRetries: options.modelRetries ?? settings.modelRetries,
    approvalTtlMs: options.approvalTtlMs ?? settings.approvalTtlMs,
    runInputMaxBytes: options.runInputMaxBytes ?? settings.runInputMaxBytes,
    telemetry,
    maxDepth: options.maxDepth ?? settings.maxDepth,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    ...(options.oauth === undefined ? {} : { oauth: options.oauth }),
    ...(options.connectRedirectUri === undefined ? {} : { connectRedirectUri: options.connectRedirectUri }),
  };
  const loader = new PinnedLoader(options.db, reads.reads);
  let queue: Awaited<ReturnType<typeof openRunQueue>>;
  try {
    queue = await openRunQueue(options.db, (error) => log.error({ err: error }, 'run queue error'), options.wakeups);
  } catch (error) {
    await reads.close();
    await telemetry?.shutdown();
    throw error;
  }
  let worker: RunWorker | undefined;
  if (options.worker) {
    worker = new RunWorker(
      deps,
      loader,
      queue,
      {
        concurrency: options.worker.concurrency ?? settings.workerConcurrency,
        drainMs: options.drainMs ?? DEFAULT_DRAIN_MS,
      },
      log,
      options.wakeups,
    );
    await worker.start();
  }
  return new RunService(
    deps,
    loader,
    queue,
    worker?.owner ?? null,
    async () => {
      await worker?.stop();
      // Meanwhile the spans of the runs just handed on or ended leave, within 4 s (a dead collector does not hold
      // the stop longer).
      const flushed = telemetry?.shutdown();
      await queue.stop(5000);
      await reads.close();
      await flushed;
    },
    worker,
  );
}

/**
 * Runs a worker alone (`mt worker`): PostgreSQL only, since an embedded database serves one process.
 * Resolves with the engine; close it on SIGTERM/SIGINT.
 */
export async function runWorker(
  options: Omit<EngineOptions, 'worker'> & { concurrency?: number },
): Promise<RunningEngine> {
  if (options.db.driver !== 'pg') throw engineErrors.create('api:runs:worker-unsupported');
  return createEngine({ ...options, worker: { concurrency: options.concurrency } });
}
