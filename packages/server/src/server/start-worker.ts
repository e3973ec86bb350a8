import { egressPolicyFromEnv, type Resolver } from '@maitento/egress';
import {
  type EngineLogger,
  embeddingModelFromEnv,
  type RunningEngine,
  runWorker,
  startEmbeddingWorker,
} from '@maitento/engine';
import { createGateway, type Gateway } from '@maitento/gateway';
import {
  type CacheLease,
  checkSecretKeys,
  createStoreCache,
  type Db,
  openDatabase,
  openWakeups,
  resolveSecretKey,
  startCacheLease,
  startRetention,
  type Wakeups,
} from '@maitento/store';
import { platformCalls } from '../calls/platform-calls.js';
import { logInternalErrors } from '../logging/internal-errors.js';
import { type ProcessMetrics, startMetrics } from './metrics.js';
import { prepareSchema } from './migrations.js';
import {
  cacheLeaseMsFromEnv,
  metricsListenFromEnv,
  migrateModeFromEnv,
  publicUrlFromEnv,
  auditRetentionMsFromEnv,
  retentionMsFromEnv,
  secretKeysFromEnv,
} from './settings.js';

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
 * as the server does (same egress rules, same platform tokens), and takes runs from the queue.
 */
export async function startWorker(options: StartWorkerOptions): Promise<RunningWorker> {
  const env = secretKeysFromEnv();
  const key = resolveSecretKey({
    value: options.secretKey ?? env.value,
    previous: env.previous,
  });
  // Read before anything starts: a bad setting (api:metrics:port-invalid) stops the start with nothing to close.
  const listen = metricsListenFromEnv();
  const migrateMode = migrateModeFromEnv();
  const db = await openDatabase({ databaseUrl: options.databaseUrl, applicationName: 'mt-worker' });
  try {
    // MT_MIGRATE: migrate a new or older database at start (default), or only check it (docs/operations.md, "Upgrades").
    await prepareSchema(db, migrateMode);
    // Refuses to start (api:secrets:key-id-missing) when stored secrets are under a key this worker lacks.
    await checkSecretKeys(db, key.keyring);
    const platformOrigin = options.platformOrigin ?? publicUrlFromEnv();
    const gateway = createGateway({
      policy: egressPolicyFromEnv(),
      resolver: options.resolver,
      // As `mt serve`: a bug in a tool call is logged with its stack, the run only sees api:gateway:internal.
      onInternalError: logInternalErrors(() => options.logger),
      ...platformCalls(platformOrigin, key.keyring),
    });
    // The worker's own cache of versions, `enabled` and secrets, kept fresh by every server's NOTIFY.
    const cache = await createStoreCache(db, { secretKey: key.keyring }).catch(async (error: unknown) => {
      await gateway.close();
      throw error;
    });
    let wakeups: Wakeups | undefined;
    let lease: CacheLease | undefined;
    let metrics: ProcessMetrics | undefined;
    try {
      // The worker's wake-ups: it fetches on `runs` and reads a held run's cancel on `run:<id>`.
      wakeups = await openWakeups(db, options.logger ? { logger: options.logger } : {});
      // A member of the cache lease, as a server: its tool calls read no epoch while the lease holds.
      lease = startCacheLease({
        db,
        wakeups,
        cache,
        leaseMs: cacheLeaseMsFromEnv(),
        ...(options.logger ? { logger: options.logger } : {}),
      });
      // Prometheus metrics on their own port (MT_METRICS_PORT), as `mt serve`'s: the runs and tool calls of this worker.
      const leaseNow = lease;
      if (listen !== undefined) {
        metrics = await startMetrics({ ...listen, db, lease: () => leaseNow.state(), role: 'worker' });
        options.logger?.info({ url: metrics.url }, `metrics at ${metrics.url}`);
      }
      const engine = await runWorker({
        db,
        secretKey: key.keyring,
        gateway,
        cache,
        wakeups,
        ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
        ...(options.logger ? { logger: options.logger } : {}),
        ...(metrics === undefined ? {} : { metrics: metrics.ops }),
      });
      // Passages of knowledge bases get their vectors here too, when an embedding model is configured.
      const model = await embeddingModelFromEnv();
      const embedding = model ? startEmbeddingWorker({ db, model, wakeups, logger: options.logger }) : undefined;
      // Ended runs older than MT_RETENTION_DAYS are deleted every hour (docs/operations.md, "Data lifecycle").
      // Audit rows older than MT_AUDIT_RETENTION_DAYS go in the same job (docs/audit.md, "Retention").
      const retentionMs = retentionMsFromEnv();
      const auditRetentionMs = auditRetentionMsFromEnv();
      const retention =
        retentionMs === undefined && auditRetentionMs === undefined
          ? undefined
          : startRetention({
              db,
              retentionMs,
              ...(auditRetentionMs === undefined ? {} : { auditRetentionMs }),
              ...(options.logger ? { logger: options.logger } : {}),
            });
      return {
        engine,
        gateway,
        db,
        async close() {
          await retention?.close();
          await embedding?.close();
          await engine.close();
          await metrics?.close();
          await lease?.close();
          await wakeups?.close();
          await cache.close();
          await gateway.close();
          await db.close();
        },
      };
    } catch (error) {
      await metrics?.close();
      await lease?.close();
      await wakeups?.close();
      await cache.close();
      await gateway.close();
      throw error;
    }
  } catch (error) {
    await db.close();
    throw error;
  }
}
