import type { Resolver } from '@maitento/egress';
import type { EngineLogger, RunningEngine } from '@maitento/engine';
import type { Gateway } from '@maitento/gateway';
import { type Db, resolveSecretKey } from '@maitento/store';
import { openPreparedDatabase, openRuntime } from './runtime.js';
import { metricsListenFromEnv, migrateModeFromEnv, publicUrlFromEnv, secretKeysFromEnv } from './settings.js';

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
}

/**
 * Starts a worker alone on PostgreSQL (`mt worker`): migrates the database if it is new, builds the gateway
 * as the server does (same egress rules, same platform tokens), and takes runs from the queue. Everything below the
 * HTTP API is wired by {@link openRuntime}, as in `mt serve`.
 */
export async function startWorker(options: StartWorkerOptions): Promise<RunningWorker> {
  const env = secretKeysFromEnv();
  const key = resolveSecretKey({
    value: options.secretKey ?? env.value,
    previous: env.previous,
  });
  // Read before anything starts: a bad setting (api:metrics:port-invalid) stops the start with nothing to close.
  const listen = metricsListenFromEnv();
  const migrate = migrateModeFromEnv();
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
    // Made now: a worker executes runs (a worker alone never runs on the embedded database).
    const engine = runtime.running;
    if (!engine) throw new Error('the runtime of a worker made no engine');
    return {
      engine,
      gateway: runtime.gateway,
      db,
      async close() {
        await runtime.close();
        await db.close();
      },
    };
  } catch (error) {
    await db.close();
    throw error;
  }
}
