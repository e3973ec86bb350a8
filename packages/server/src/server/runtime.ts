import { type EgressPolicy, egressPolicyFromEnv, type Resolver } from '@maitento/egress';
import {
  createEngine,
  type EmbeddingModel,
  type Engine,
  type EngineLogger,
  type EngineOptions,
  embeddingModelFromEnv,
  type RunningEngine,
  runWorker,
  startTelemetry,
} from '@maitento/engine';
import { CALLBACK_PATH, lazyOAuthClient } from '../routes/connections.js';
import { createGateway, createOAuthClient, type Gateway, type OAuthClient } from '@maitento/gateway';
import {
  type CacheLease,
  type CacheLeaseState,
  checkSecretKeys,
  createStoreCache,
  createLimiter,
  type Db,
  type OpenDatabaseOptions,
  openDatabase,
  openWakeups,
  type SecretKeyCheck,
  type Retention,
  type SecretKeys,
  type StoreCache,
  startCacheLease,
  startRetention,
  type Wakeups,
  type WakeupsOptions,
} from '@maitento/store';
import { platformCalls } from '../calls/platform-calls.js';
import { type EmbeddingWorker, startEmbeddingWorker } from '../knowledge/index.js';
import { logInternalErrors } from '../logging/internal-errors.js';
import { startWebhookDelivery, type WebhookDeliveryLoop } from '../notifications/delivery.js';
import { type Scheduler, startScheduler } from '../schedules/scheduler.js';
import { type Chainer, startChainer } from '../triggers/chainer.js';
import { lazyEngine } from './lazy-engine.js';
import { type MetricsListen, type ProcessMetrics, startMetrics } from './metrics.js';
import { prepareSchema } from './migrations.js';
import {
  auditRetentionMsFromEnv,
  cacheLeaseMsFromEnv,
  type MigrateMode,
  retentionMsFromEnv,
  triggerChainingFromEnv,
  type WebhookSettings,
  webhookSettingsFromEnv,
} from './settings.js';

/**
 * Opens the process's database and prepares it as `mt serve` and `mt worker` both do: migrates it or only checks it
 * (MT_MIGRATE, docs/operations.md "Upgrades"), then checks the master keys, refusing to start
 * (api:secrets:key-id-missing) when stored secrets are under a key this process lacks. Closes it again on a failure.
 */
export async function openPreparedDatabase(options: {
  open: OpenDatabaseOptions;
  migrate: MigrateMode;
  secretKey: SecretKeys;
  /** Told what the key check found (secrets converted, keys that can be retired). */
  onKeyCheck?: (check: SecretKeyCheck) => void;
}): Promise<Db> {
  const db = await openDatabase(options.open);
  try {
    await prepareSchema(db, options.migrate);
    const check = await checkSecretKeys(db, options.secretKey);
    options.onKeyCheck?.(check);
    return db;
  } catch (error) {
    await db.close();
    throw error;
  }
}

/**
 * Options of {@link openRuntime}: what `mt serve` (createServer) and `mt worker` (startWorker) both wire on an open,
 * prepared database. Every part given ready (gateway, cache, wake-ups, engine) is used and left to its owner to close.
 */
export interface RuntimeOptions {
  db: Db;
  secretKey: SecretKeys;
  /** Names this process in the metrics (`mt_process_role`). */
  role: 'serve' | 'worker';
  /**
   * Where the parts log. A server passes one whose target is set once fastify's logger exists; `mt worker` its own.
   * Without one the wake-ups, lease and engine log nothing (their defaults).
   */
  logger?: EngineLogger;
  /** Address rules of the gateway (default from the environment, `MT_EGRESS_ALLOW`, ...). */
  egress?: EgressPolicy;
  /** Name resolution of the gateway's calls (tests pass one they control). */
  resolver?: Resolver;
  /** A ready gateway instead of one made from `egress` and `resolver` (its owner closes it). */
  gateway?: Gateway;
  /** The only target of `auth = "Maitento"` connectors (MT_PUBLIC_URL). */
  platformOrigin?: string;
  /** A ready cache of the call path's reads (its owner closes it). */
  cache?: StoreCache;
  /** Ready wake-ups (their owner closes them). */
  wakeups?: Wakeups;
  /** Options of the wake-ups opened here. */
  wakeOptions?: Omit<WakeupsOptions, 'logger'>;
  /** The cache lease's length in ms (default `MT_CACHE_LEASE_MS`). */
  cacheLeaseMs?: number;
  /** A fixed cache lease member id (tests). */
  cacheMemberId?: string;
  /** Where to serve Prometheus metrics, read by the caller before the database opened; undefined for none. */
  metrics?: MetricsListen;
  /** A ready engine (its owner closes it). */
  engine?: Engine;
  /** Runs this process executes (`{ concurrency }`), or false: the engine is then made on first use. */
  worker: EngineOptions['worker'];
  /** More options of the engine made here (models, maxSteps, approvalTtlMs, telemetry). */
  engineOptions?: Partial<EngineOptions>;
  /** Age after which ended runs are deleted (`null` keeps them); default `MT_RETENTION_DAYS`. Only with a worker. */
  retentionMs?: number | null;
  /** The knowledge bases' embedding model (`null` for none); default `MT_EMBEDDING_MODEL`. */
  embeddingModel?: EmbeddingModel | null;
  /** How webhooks are delivered (default `MT_WEBHOOK_*`); concurrency 0: this process delivers none. */
  webhooks?: Partial<WebhookSettings>;
  /** The scheduler of schedules (default on); false: this process ticks none (tests of something else). */
  scheduler?: boolean | { now?: () => Date; pollMs?: number };
  /** The chaining loop of triggers (default on); false: this process starts no run on another's end. */
  chainer?: boolean | { sweepMs?: number };
}

/** The parts of a running `mt serve` or `mt worker` below the HTTP API, closed together in one order. */
export interface Runtime {
  gateway: Gateway;
  /** The process's OAuth 2 client, made on first use: connect links, callbacks and the refresh of runs' tokens. */
  oauth: () => OAuthClient;
  egress: EgressPolicy;
  cache: StoreCache;
  wakeups: Wakeups;
  lease: CacheLease;
  /** The engine: made now with a worker, on first use without one (or the one given). */
  engine: Engine;
  /** The engine made now, with this process's worker id; undefined when it is made on first use or was given. */
  running?: RunningEngine;
  metrics?: ProcessMetrics;
  telemetry?: Awaited<ReturnType<typeof startTelemetry>>;
  embeddingModel?: EmbeddingModel;
  embeddingWorker?: EmbeddingWorker;
  retention?: Retention;
  /** The outbound webhooks' delivery loop (docs/notifications.md); absent with `MT_WEBHOOK_CONCURRENCY=0`. */
  webhookDelivery?: WebhookDeliveryLoop;
  scheduler?: Scheduler;
  chainer?: Chainer;
  /**
   * Stops the workers (retention, embeddings, the engine's runs) before what they use, then the telemetry and
   * metrics, leaves the cache lease, and closes the wake-ups, cache and gateway this runtime opened. Not the database.
   */
  close(): Promise<void>;
}

/**
 * Wires everything `mt serve` and `mt worker` share on a prepared database (migrated or checked, secret keys checked):
 * metrics first (a port in use stops the start with nothing else started), the gateway, the cache, the wake-ups, the
 * cache lease, OpenTelemetry, the engine, the embedding worker and the retention job. A new concern of both processes
 * is wired here once. On a failure, what was opened is closed again.
 */
export async function openRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { db, secretKey, logger } = options;
  // What is open so far, closed in reverse when the start fails half-way.
  const closers: (() => Promise<void> | void)[] = [];
  const closeAll = async () => {
    for (const close of closers.splice(0).reverse()) await close();
  };
  try {
    // The lease's mode once it exists, for the metrics started before it.
    let leaseState = (): CacheLeaseState => ({ mode: 'off' });
    const metrics =
      options.metrics === undefined
        ? undefined
        : await startMetrics({ ...options.metrics, db, lease: () => leaseState(), role: options.role });
    if (metrics) closers.push(() => metrics.close());

    const egress = options.egress ?? egressPolicyFromEnv();
    // `auth = "Maitento"` connectors call the platform's own API with a short-lived token of the call's namespace;
    // a bug in a tool call is logged with its stack, the run only sees api:gateway:internal.
    const gateway =
      options.gateway ??
      createGateway({
        policy: egress,
        resolver: options.resolver,
        onInternalError: logInternalErrors(() => logger),
        ...platformCalls(options.platformOrigin, secretKey),
        // Tools' limits, counted in the database so that they hold across every server and worker (docs/limits.md).
        limiter: createLimiter(db),
      });
    if (options.gateway === undefined) closers.push(() => gateway.close());
    // OAuth 2 requests (connect links, callbacks, refreshes) go through the same egress policy as tool calls.
    const oauth = lazyOAuthClient(() =>
      createOAuthClient({
        policy: egress,
        ...(options.resolver ? { resolver: options.resolver } : {}),
        // A client registered dynamically (RFC 7591) is registered with this server's callback.
        ...(options.platformOrigin === undefined
          ? {}
          : { redirectUri: new URL(CALLBACK_PATH, options.platformOrigin).href }),
      }),
    );
    closers.push(() => oauth.close());
    // The cache of versions, `enabled` and secrets, kept fresh by every server's NOTIFY.
    const cache = options.cache ?? (await createStoreCache(db, { secretKey }));
    if (options.cache === undefined) closers.push(() => cache.close());
    // The engine fetches on `runs` and reads a held run's cancel on `run:<id>`; streams and the lease use them too.
    const wakeups =
      options.wakeups ?? (await openWakeups(db, { ...options.wakeOptions, ...(logger ? { logger } : {}) }));
    if (options.wakeups === undefined) closers.push(() => wakeups.close());
    // The bounded cache lease (docs/decisions/0009-how-a-change-reaches-every-servers-cache.md): this process's cache
    // is a member, and its writes settle. On PGlite (one process) nothing to do.
    const lease = startCacheLease({
      db,
      wakeups,
      cache,
      leaseMs: options.cacheLeaseMs ?? cacheLeaseMsFromEnv(),
      ...(options.cacheMemberId === undefined ? {} : { memberId: options.cacheMemberId }),
      ...(logger ? { logger } : {}),
    });
    // Leaves the lease first (its row goes, so writers stop waiting for this process) on the wake-up connection.
    closers.push(() => lease.close());
    leaseState = () => lease.state();

    // OpenTelemetry (docs/telemetry.md), one for the process: the runs' spans and the direct tool calls' alike.
    const telemetry =
      options.engineOptions?.telemetry !== undefined
        ? (options.engineOptions.telemetry ?? undefined)
        : await startTelemetry(logger);
    // Flushed by the engine's close already, unless the engine was never made (a server without a worker).
    if (telemetry) closers.push(() => telemetry.shutdown());
    const engineOptions: Omit<EngineOptions, 'worker'> = {
      ...(logger ? { logger } : {}),
      ...options.engineOptions,
      telemetry: telemetry ?? null,
      db,
      secretKey,
      gateway,
      oauth: oauth.get,
      ...(options.platformOrigin === undefined
        ? {}
        : { connectRedirectUri: new URL(CALLBACK_PATH, options.platformOrigin).href }),
      // Runs' tool calls read through the same cache as the server's (one gateway plan per version).
      cache,
      wakeups,
      ...(metrics === undefined ? {} : { metrics: metrics.ops }),
    };
    const worker = options.worker;
    // `mt worker` goes through runWorker, which refuses the embedded database (api:runs:worker-unsupported).
    const makeEngine = () =>
      options.role === 'worker' && worker
        ? runWorker({
            ...engineOptions,
            ...(worker.concurrency === undefined ? {} : { concurrency: worker.concurrency }),
          })
        : createEngine({ ...engineOptions, worker: worker ?? false });
    // With a worker the engine starts now; without one, at the first request that needs it.
    const running = options.engine === undefined && options.worker ? await makeEngine() : undefined;
    const engine = options.engine ?? running ?? lazyEngine(makeEngine);
    if (options.engine === undefined) closers.push(() => engine.close());

    // Passages of knowledge bases get their vectors where runs are executed, when an embedding model is configured.
    const embeddingModel =
      (options.embeddingModel === undefined ? await embeddingModelFromEnv() : options.embeddingModel) ?? undefined;
    const embeddingWorker =
      embeddingModel && options.worker
        ? startEmbeddingWorker({ db, model: embeddingModel, wakeups, ...(logger ? { logger } : {}) })
        : undefined;
    if (embeddingWorker) closers.push(() => embeddingWorker.close());
    // Ended runs older than MT_RETENTION_DAYS are deleted every hour where runs are executed, not in an API-only
    // server (docs/operations.md, "Data lifecycle"); audit rows older than MT_AUDIT_RETENTION_DAYS in the same job
    // (docs/audit.md, "Retention").
    const retentionMs = options.retentionMs === undefined ? retentionMsFromEnv() : (options.retentionMs ?? undefined);
    const auditRetentionMs = auditRetentionMsFromEnv();
    const retention =
      options.worker && (retentionMs !== undefined || auditRetentionMs !== undefined)
        ? startRetention({
            db,
            retentionMs,
            ...(auditRetentionMs === undefined ? {} : { auditRetentionMs }),
            ...(logger ? { logger } : {}),
          })
        : undefined;
    if (retention) closers.push(() => retention.close());
    // Outbound webhooks are sent by every process, API-only servers too (docs/notifications.md): a loop of its own,
    // through the tools' egress rules, sharing the due deliveries with the other processes.
    const webhookSettings = webhookSettingsFromEnv(options.webhooks);
    const webhookDelivery =
      webhookSettings.concurrency > 0
        ? startWebhookDelivery({
            db,
            secretKey,
            wakeups,
            policy: egress,
            ...(options.resolver ? { resolver: options.resolver } : {}),
            settings: webhookSettings,
            ...(logger ? { logger } : {}),
          })
        : undefined;
    if (webhookDelivery) closers.push(() => webhookDelivery.close());
    // Schedules tick in every process, `mt serve` and `mt worker` alike: a tick's row decides which one starts its
    // run (docs/schedules-and-triggers.md).
    const scheduler =
      options.scheduler === false
        ? undefined
        : startScheduler({
            db,
            engine,
            wakeups,
            ...(logger ? { logger } : {}),
            ...(typeof options.scheduler === 'object' ? options.scheduler : {}),
          });
    if (scheduler) closers.push(() => scheduler.close());
    // Runs that start on another run's end, in every process too: the delivery's row decides which one starts it.
    // MT_TRIGGER_CHAINING=off: this process leaves them to the others (a delivery owed waits for a process that takes it).
    const chainer =
      options.chainer === false || (options.chainer === undefined && !triggerChainingFromEnv())
        ? undefined
        : startChainer({
            db,
            engine,
            wakeups,
            ...(logger ? { logger } : {}),
            ...(typeof options.chainer === 'object' ? options.chainer : {}),
          });
    if (chainer) closers.push(() => chainer.close());

    return {
      gateway,
      oauth: oauth.get,
      egress,
      cache,
      wakeups,
      lease,
      engine,
      ...(running ? { running } : {}),
      ...(metrics ? { metrics } : {}),
      ...(telemetry ? { telemetry } : {}),
      ...(embeddingModel ? { embeddingModel } : {}),
      ...(embeddingWorker ? { embeddingWorker } : {}),
      ...(retention ? { retention } : {}),
      ...(webhookDelivery ? { webhookDelivery } : {}),
      ...(scheduler ? { scheduler } : {}),
      ...(chainer ? { chainer } : {}),
      async close() {
        await scheduler?.close();
        await chainer?.close();
        // The workers stop before what they use; metrics after the engine whose counters they serve.
        await webhookDelivery?.close();
        await retention?.close();
        await embeddingWorker?.close();
        if (options.engine === undefined) await engine.close();
        await telemetry?.shutdown();
        await metrics?.close();
        await lease.close();
        if (options.wakeups === undefined) await wakeups.close();
        if (options.cache === undefined) await cache.close();
        if (options.gateway === undefined) await gateway.close();
        await oauth.close();
      },
    };
  } catch (error) {
    await closeAll().catch(() => undefined);
    throw error;
  }
}
