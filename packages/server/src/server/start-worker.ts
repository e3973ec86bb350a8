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
  checkSecretKeys,
  type CacheLease,
  createStoreCache,
  type Db,
  migrate,
  openDatabase,
  openWakeups,
  startCacheLease,
  resolveSecretKey,
  type Wakeups,
} from '@maitento/store';
import { logInternalErrors } from '../internal/internal-errors.js';
import { platformCalls } from '../internal/platform-calls.js';
import { cacheLeaseMsFromEnv, publicUrlFromEnv, secretKeysFromEnv } from './settings.js';

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
  const db = await openDatabase({ databaseUrl: options.databaseUrl });
  try {
    await migrate(db);
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
      const engine = await runWorker({
        db,
        secretKey: key.keyring,
        gateway,
        cache,
        wakeups,
        ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
        ...(options.logger ? { logger: options.logger } : {}),
      });
      // Passages of knowledge bases get their vectors here too, when an embedding model is configured.
      const model = await embeddingModelFromEnv();
      const embedding = model ? startEmbeddingWorker({ db, model, wakeups, logger: options.logger }) : undefined;
      return {
        engine,
        gateway,
        db,
        async close() {
          await embedding?.close();
          await engine.close();
          await lease?.close();
          await wakeups?.close();
          await cache.close();
          await gateway.close();
          await db.close();
        },
      };
    } catch (error) {
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
