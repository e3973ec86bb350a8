import type { Resolver } from '@maitento/egress';
import type { EngineLogger, RunningEngine } from '@maitento/engine';
import type { Gateway } from '@maitento/gateway';
import { type Db, resolveSecretKey } from '@maitento/store';
import { openPreparedDatabase, openRuntime } from './runtime.js';
import {
  metricsListenFromEnv,
  migrateModeFromEnv,
  publicUrlFromEnv,
  secretKeysFromEnv,
  shutdownSettingsFromEnv,
  workerHealthListenFromEnv,
  workerStuckMsFromEnv,
} from './settings.js';
import { ShutdownState, shutdownPlan } from './shutdown.js';
import { startWorkerHealth, type WorkerHealthServer } from './worker-health.js';

/** Options of {@link startWorker}; every one has a default from the environment. */
export interface StartWorkerOptions {
  /** PostgreSQL (a worker alone never runs on the embedded database); default `DATABASE_URL`. */
  databaseUrl: string;
  /** Default `MT_SECRET_KEY`. */
  secretKey?: string;
  /** Runs executed at once (default `MT_WORKER_CONCURRENCY`, else the engine's default). */
  concurrency?: number;
  /** Default `MT_PUBLIC_URL`: the only target of `auth = "Maitento"` connectors. */
  platformOrigin?: string;
  /** Name resolution for tool calls (default the system's; tests pass one they control). */
  resolver?: Resolver;
  /** The engine's log, and the gateway's: an unexpected error in a tool call is logged here with its stack. */
  logger?: EngineLogger;
}

/** A worker executing runs until it is closed. */
export interface RunningWorker {
  engine: RunningEngine;
  /** The gateway the worker's tool calls go through. */
  gateway: Gateway;
  db: Db;
  /** Stops taking runs, lets the tool calls in flight finish and hands their runs on, then closes the gateway and the database. */
  close(): Promise<void>;
  /**
   * Stops as on SIGTERM (docs/operations.md, "Shutdown"): readiness false at once, no more runs taken, tool calls in
   * flight may finish until the drain's end, then their runs are handed back; then `close`.
   */
  shutdown(): Promise<void>;
  /** `MT_SHUTDOWN_GRACE_MS`: the caller exits this long after it called `shutdown`, whatever is left. */
  readonly graceMs: number;
  /** `http://host:port` of the health port (`MT_WORKER_HEALTH_PORT`), when it has one. */
  readonly healthUrl?: string;
}

/**
 * Starts a worker alone on PostgreSQL (`mt worker`): migrates the database if it is new, builds the gateway
 * as the server does (same egress rules, same platform tokens), and takes runs from the queue.
 */
export async function startWorker(options: StartWorkerOptions): Promise<RunningWorker> {
  const env = secretKeysFromEnv();
  const key = resolveSecretKey({
    value: options.secretKey ?? env.value,
    previous: env.previous,
  });
  // Read before anything starts: a bad setting (api:metrics:port-invalid, api:health:port-invalid) stops the start
  // with nothing to close.
  const listen = metricsListenFromEnv();
  const migrate = migrateModeFromEnv();
  const healthListen = workerHealthListenFromEnv();
  const stuckMs = workerStuckMsFromEnv();
  const plan = shutdownPlan(shutdownSettingsFromEnv());
  const shutdown = new ShutdownState();
  const db = await openPreparedDatabase({
    open: { databaseUrl: options.databaseUrl, applicationName: 'mt-worker' },
    migrate,
    secretKey: key.keyring,
  });
  try {
    const runtime = await openRuntime({
      db,
      secretKey: key.keyring,
      role: 'worker',
      platformOrigin: options.platformOrigin ?? publicUrlFromEnv(),
      ...(options.resolver ? { resolver: options.resolver } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
      ...(listen === undefined ? {} : { metrics: listen }),
      worker: { ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }) },
    });
    if (runtime.metrics) options.logger?.info({ url: runtime.metrics.url }, `metrics at ${runtime.metrics.url}`);
    let health: WorkerHealthServer | undefined;
    try {
      // Made now: a worker executes runs (a worker alone never runs on the embedded database).
      const engine = runtime.running;
      if (!engine) throw new Error('the runtime of a worker made no engine');
      shutdown.onBegin((drainMs) => {
        engine
          .stopWorker?.(drainMs)
          .catch((error) => options.logger?.error({ err: error }, 'stopping the worker failed'));
      });
      // The live and ready routes of `mt serve` on a small port of their own (MT_WORKER_HEALTH_PORT), when asked for.
      if (healthListen !== undefined) {
        const { wakeups, lease } = runtime;
        health = await startWorkerHealth(healthListen, () => ({
          db,
          listening: wakeups.listening,
          cache: lease.state(),
          worker: engine.workerHealth?.() ?? null,
          shuttingDown: shutdown.begun,
          stuckMs,
        }));
        options.logger?.info({ url: health.url }, `health at ${health.url}`);
      }
      const healthNow = health;
      const close = async () => {
        // Readiness says so while it stops (a close without a shutdown too).
        shutdown.begin(plan.drainMs);
        await runtime.close();
        await healthNow?.close();
        await db.close();
      };
      return {
        engine,
        gateway: runtime.gateway,
        db,
        close,
        graceMs: plan.graceMs,
        ...(healthNow === undefined ? {} : { healthUrl: healthNow.url }),
        async shutdown() {
          options.logger?.info({ ...plan }, 'shutting down: readiness false, no new runs taken');
          shutdown.begin(plan.drainMs);
          await close();
        },
      };
    } catch (error) {
      await health?.close();
      await runtime.close();
      throw error;
    }
  } catch (error) {
    await db.close();
    throw error;
  }
}
