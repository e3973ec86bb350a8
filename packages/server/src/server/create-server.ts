import swagger from '@fastify/swagger';
import type { EgressPolicy, Resolver } from '@maitento/egress';
import { type EmbeddingModel, type Engine, type EngineOptions, missingModelSetting } from '@maitento/engine';
import type { Gateway } from '@maitento/gateway';
import {
  bootstrap,
  chooseVectorSearch,
  type Db,
  detectVectorSupport,
  type FileLimits,
  type SecretKeys,
  type StoreCache,
  type Wakeups,
  type WakeupsOptions,
} from '@maitento/store';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import { consoleRoutes } from '../console/routes.js';
import { serverErrors } from '../errors.js';
import { lazySerializerBuilder } from '../http/lazy-schemas.js';
import { markOptionalBodies, takesOptionalBody } from '../http/optional-body.js';
import { formatSchemaError, installValidators } from '../http/validation.js';
import { echoRequestId, loggerOptions, requestId, requestLogger } from '../logging/logging.js';
import { registerRequestLog } from '../logging/request-log.js';
import { mcpRoutes } from '../mcp/mcp-routes.js';
import type { McpSettings } from '../mcp/settings.js';
import { documentOperations } from '../openapi/document.js';
import { publishFileRoutes } from '../openapi/files.js';
import { declareHeaders, OPENAPI_TAGS } from '../openapi/headers.js';
import { type OperationDoc, operationDoc } from '../openapi/operation.js';
import { registerAuth } from '../plugins/auth.js';
import { frameworkErrorHandler, registerErrorHandler } from '../plugins/error-handler.js';
import { registerIdempotency } from '../plugins/idempotency.js';
import { agentRoutes } from '../routes/agents.js';
import { authProviderRoutes } from '../routes/auth-providers.js';
import { hookRoutes, triggerRoutes } from '../routes/hooks.js';
import { scheduleRoutes } from '../routes/schedules.js';
import { approvalRoutes } from '../routes/approvals.js';
import { connectionCallbackRoutes, connectionRoutes } from '../routes/connections.js';
import { connectorRoutes } from '../routes/connectors.js';
import { deployRoutes } from '../routes/deploy.js';
import { extopRoutes } from '../routes/extops.js';
import { fileSystemRoutes } from '../routes/file-systems.js';
import { healthRoutes } from '../routes/health.js';
import { interactionRoutes } from '../routes/interactions.js';
import { auditRoutes } from '../routes/audit.js';
import { keyRoutes } from '../routes/keys.js';
import { knowledgeBaseRoutes } from '../routes/knowledge-bases.js';
import { namespaceRoutes } from '../routes/namespaces.js';
import { runRoutes } from '../routes/runs.js';
import { secretRoutes } from '../routes/secrets.js';
import { webhookRoutes } from '../routes/webhooks.js';
import { addSharedSchemas, MAX_NAME_LENGTH, type WireTypes } from '../schemas/shared.js';
import { DEFAULT_STREAM_TIMING, type EventStreamTiming } from '../streams/event-stream.js';
import { watchKeys } from '../streams/key-watch.js';
import { PerKeyLimit } from '../streams/per-key-limit.js';
import type { ServerContext } from './context.js';
import { openRuntime } from './runtime.js';
import { ShutdownState } from './shutdown.js';
import type { ExtractBudget } from '../knowledge/index.js';
import {
  fileLimitsFromEnv,
  knowledgeDocumentLimitFromEnv,
  knowledgeExtractBudgetFromEnv,
  mcpSettingsFromEnv,
  runStreamsPerKeyFromEnv,
  idempotencyLeaseSecondsFromEnv,
  slowRequestMsFromEnv,
  streamKeepAliveMsFromEnv,
  trustProxyFromEnv,
  metricsListenFromEnv,
  type MigrateMode,
  migrateModeFromEnv,
} from './settings.js';
import type { MetricsListen } from './metrics.js';
import { prepareSchema } from './migrations.js';

/** Options of {@link createServer}. */
export interface ServerOptions {
  /** The database (migrated and bootstrapped by `createServer`); the caller closes it. */
  db: Db;
  /** The 32-byte master key secrets are wrapped under, or a keyring with the previous keys of a rotation. */
  secretKey: SecretKeys;
  /** Address rules for deploy checks and calls; default from the environment (`MT_EGRESS_ALLOW`, ...). */
  egress?: EgressPolicy;
  /** Name resolution for gateway calls (tests pass one they control). */
  resolver?: Resolver;
  /** A ready gateway to use instead of one made from `egress` and `resolver`. */
  gateway?: Gateway;
  /** The server's public origin, the only target of `auth = "Maitento"` connectors. */
  platformOrigin?: string;
  /** The first admin key on an empty database (`MT_BOOTSTRAP_KEY`); a random one when absent. */
  bootstrapKey?: string;
  /** Told the generated first admin key, once; default: printed on stderr. */
  onBootstrapKey?: (key: string) => void;
  /**
   * False leaves an empty database empty: `startServer` bootstraps it with {@link bootstrapDatabase} only
   * once it listens, so a server that fails to start never prints a key that is then lost. Default true.
   */
  bootstrap?: boolean;
  /** Fastify's logger option; redaction of keys and secret values is always added. */
  logger?: FastifyServerOptions['logger'];
  /** Largest request body in bytes (default 10 MiB, for whole config repos). */
  bodyLimit?: number;
  /** The cache of the call path's reads on `db`, to share it (the caller closes it); default: one of its own. */
  cache?: StoreCache;
  /** A ready run engine to use (the caller closes it); otherwise one is made on `db` and closed with the server. */
  engine?: Engine;
  /** Runs this process executes: `{ concurrency }`, or false (the default) for an API that only queues runs. */
  worker?: EngineOptions['worker'];
  /** More options of the engine the server makes (models, maxSteps, approvalTtlMs). */
  engineOptions?: Partial<EngineOptions>;
  /** Fallback poll interval and keep-alive of run event streams (tests change them). */
  streamTiming?: Partial<EventStreamTiming>;
  /**
   * Which peers are reverse proxies whose `X-Forwarded-For` names the client (fastify's `trustProxy`: the console's
   * sign-in limit is per client address); default `MT_TRUST_PROXY`, none when unset.
   */
  trustProxy?: boolean | string[];
  /** The most run event streams one API key holds open at once (default `MT_RUN_STREAMS_PER_KEY` or 20). */
  runStreamsPerKey?: number;
  /** The process's wake-ups to use (the caller closes them); default: opened on `db` and closed with the server. */
  wakeups?: Wakeups;
  /** The cache lease's length L in ms (default `MT_CACHE_LEASE_MS` or 1000); tests shorten it. */
  cacheLeaseMs?: number;
  /** A fixed id of this process's cache lease member (tests of a reused id); default a random one per join. */
  cacheMemberId?: string;
  /** Options of the wake-ups the server opens (another URL to LISTEN through, deadlines); tests change them. */
  wakeOptions?: Omit<WakeupsOptions, 'logger'>;
  /** How the MCP endpoints wait and poll; default from the environment (docs/mcp.md). */
  mcp?: Partial<McpSettings>;
  /** How long a request holds its Idempotency-Key without renewal (default `MT_IDEMPOTENCY_LEASE` or 220 s). */
  idempotencyLeaseSeconds?: number;
  /** The limits of files and file systems; default from `MT_FILE_MAX_BYTES` and `MT_FILE_SYSTEM_MAX_BYTES`. */
  fileLimits?: Partial<FileLimits>;
  /** The largest document a knowledge base takes, in bytes (default `MT_KB_DOCUMENT_LIMIT` or 20 MiB). */
  knowledgeDocumentLimit?: number;
  /** What reading one knowledge-base document may take; default from `MT_KB_EXTRACT_*` (docs/knowledge-bases.md). */
  knowledgeExtractBudget?: Partial<ExtractBudget>;
  /**
   * How long ended runs and answered approvals are kept, in ms: a server with a worker deletes older ones every hour
   * (docs/operations.md, "Data lifecycle"); `null` keeps them forever. Default `MT_RETENTION_DAYS` (30 days).
   */
  retentionMs?: number | null;
  /** The scheduler of schedules (default on); false: this server ticks none; an object: its clock and poll (tests). */
  scheduler?: boolean | { now?: () => Date; pollMs?: number };
  /**
   * This process's shutdown (start-server.ts begins it on SIGTERM): readiness turns false and the worker begins its
   * stop when it begins. Default: one that begins only with `close`.
   */
  shutdown?: ShutdownState;
  /**
   * Where to serve Prometheus metrics (`GET /metrics` on a port of its own, docs/operations.md "Metrics"); null for
   * none. Default `MT_METRICS_PORT` and `MT_METRICS_HOST` (none when unset).
   */
  metrics?: MetricsListen | null;
  /**
   * The embedding model of knowledge bases: with one, documents' passages get vectors (in this process's worker,
   * when it has one) and searches fuse full-text and vector rankings; `null` for none. Default `MT_EMBEDDING_MODEL`.
   */
  embeddingModel?: EmbeddingModel | null;
  /**
   * `on` migrates the database before anything starts, `off` only checks that it is current and compatible (refusing
   * with `api:store:migrations-pending` or `api:store:schema-newer`); false when the caller prepared it. Default
   * `MT_MIGRATE` (on).
   */
  migrate?: MigrateMode | false;
}

function printBootstrapKey(key: string): void {
  process.stderr.write(
    `Created namespace "default" and its first admin key (shown once, keep it):\n  ${key}\n` +
      'Use it as MT_API_KEY, or with `mt login`.\n',
  );
}

/** Bootstraps an empty database (namespace `default` and its first admin key) and tells a generated key once. */
export async function bootstrapDatabase(
  db: Db,
  options: Pick<ServerOptions, 'bootstrapKey' | 'onBootstrapKey'>,
): Promise<void> {
  const boot = await bootstrap(db, { key: options.bootstrapKey });
  if (boot.created && boot.generated && boot.key) (options.onBootstrapKey ?? printBootstrapKey)(boot.key);
}

/**
 * Builds the REST API on `db`: migrates it, bootstraps an empty one (unless `bootstrap` is false), and
 * returns the fastify instance (ready for `inject` or `listen`).
 */
export async function createServer(options: ServerOptions): Promise<FastifyInstance> {
  // Read before anything starts: a bad setting (api:metrics:port-invalid) stops the start with nothing to close.
  const metricsListen = options.metrics === undefined ? metricsListenFromEnv() : (options.metrics ?? undefined);
  // MT_MIGRATE (docs/operations.md, "Upgrades"): migrate at start, or only check the schema; false when the caller did.
  if (options.migrate !== false) await prepareSchema(options.db, options.migrate ?? migrateModeFromEnv());
  if (options.bootstrap !== false) await bootstrapDatabase(options.db, options);
  // Everything below the HTTP API, wired as `mt worker` wires it (runtime.ts): metrics first, so a port in use stops
  // the start with nothing else started; then the gateway, cache, wake-ups, cache lease, engine, embedding worker and
  // retention. Their log lines go through the server's logger, made below.
  const log: { target?: FastifyBaseLogger } = {};
  const runtime = await openRuntime({
    db: options.db,
    secretKey: options.secretKey,
    role: 'serve',
    logger: {
      info: (obj, msg) => log.target?.info(obj, msg),
      warn: (obj, msg) => log.target?.warn(obj, msg),
      error: (obj, msg) => log.target?.error(obj, msg),
    },
    ...(options.egress ? { egress: options.egress } : {}),
    ...(options.resolver ? { resolver: options.resolver } : {}),
    ...(options.gateway ? { gateway: options.gateway } : {}),
    // `auth = "Maitento"` connectors call this server's own API (MT_PUBLIC_URL).
    ...(options.platformOrigin ? { platformOrigin: options.platformOrigin } : {}),
    ...(options.cache ? { cache: options.cache } : {}),
    ...(options.wakeups ? { wakeups: options.wakeups } : {}),
    ...(options.wakeOptions ? { wakeOptions: options.wakeOptions } : {}),
    ...(options.cacheLeaseMs === undefined ? {} : { cacheLeaseMs: options.cacheLeaseMs }),
    ...(options.cacheMemberId === undefined ? {} : { cacheMemberId: options.cacheMemberId }),
    ...(metricsListen === undefined ? {} : { metrics: metricsListen }),
    ...(options.engine ? { engine: options.engine } : {}),
    worker: options.worker ?? false,
    ...(options.engineOptions ? { engineOptions: options.engineOptions } : {}),
    ...(options.retentionMs === undefined ? {} : { retentionMs: options.retentionMs }),
    ...(options.embeddingModel === undefined ? {} : { embeddingModel: options.embeddingModel }),
    ...(options.scheduler === undefined ? {} : { scheduler: options.scheduler }),
  });
  const { engine, wakeups, cache, lease, gateway, egress, metrics, telemetry } = runtime;
  // pgvector where the database has it installed, else exact vector search: never required (docs/knowledge-bases.md).
  const vectorSupport = await detectVectorSupport(options.db);
  const ctx: ServerContext = {
    oauth: runtime.oauth,
    engine,
    streamTiming: { ...DEFAULT_STREAM_TIMING, keepAliveMs: streamKeepAliveMsFromEnv(), ...options.streamTiming },
    runStreams: new PerKeyLimit(options.runStreamsPerKey ?? runStreamsPerKeyFromEnv(), (max) =>
      serverErrors.create('api:runs:too-many-streams', { max }),
    ),
    wakeups,
    shutdown: options.shutdown ?? new ShutdownState(),
    keys: watchKeys(options.db, wakeups, { warn: (obj, msg) => log.target?.warn(obj, msg) }),
    db: options.db,
    cache,
    lease,
    secretKey: options.secretKey,
    gateway,
    egress,
    platformOrigin: options.platformOrigin,
    // Models from the environment (the default resolver): a deploy warns of a provider this process has no key for.
    ...(options.engine === undefined && options.engineOptions?.models === undefined
      ? { modelSettingMissing: missingModelSetting }
      : {}),
    fileLimits: fileLimitsFromEnv(options.fileLimits),
    knowledgeDocumentLimit: options.knowledgeDocumentLimit ?? knowledgeDocumentLimitFromEnv(),
    knowledgeExtractBudget: knowledgeExtractBudgetFromEnv(options.knowledgeExtractBudget),
    vectorSearch: chooseVectorSearch(vectorSupport),
    ...(telemetry === undefined ? {} : { telemetry }),
  };
  if (runtime.embeddingModel) ctx.embeddingModel = runtime.embeddingModel;
  if (runtime.embeddingWorker) ctx.embeddingWorker = runtime.embeddingWorker;
  const bodyLimit = options.bodyLimit ?? 10 * 1024 * 1024;
  const app = Fastify({
    logger: loggerOptions(options.logger),
    // fastify's two lines per request are replaced by registerRequestLog's one, written only when it matters.
    logController: new LogController({ disableRequestLogging: true }),
    // A request's logger is made when it first writes a line: most requests write none (logging.ts).
    childLoggerFactory: requestLogger,
    // A request's id: the caller's X-Request-Id when it is one, else a random UUID; echoed in the answer.
    requestIdHeader: false,
    genReqId: requestId,
    bodyLimit,
    // Behind a reverse proxy, `request.ip` is the client named in X-Forwarded-For by a trusted proxy; else the peer.
    trustProxy: options.trustProxy ?? trustProxyFromEnv(),
    // Resource names come from file names and may be long; the router's default cap is 100 characters.
    routerOptions: { maxParamLength: MAX_NAME_LENGTH },
    frameworkErrors: frameworkErrorHandler,
    schemaErrorFormatter: formatSchemaError,
    // Response serializers compiled on a route's first response of a status, not all at start (lazy-schemas.ts).
    schemaController: { compilersFactory: { buildSerializer: lazySerializerBuilder() } },
  });
  log.target = app.log;
  if (ctx.embeddingModel) {
    app.log.info(
      { vectorSearch: ctx.vectorSearch.kind, pgvectorAvailable: vectorSupport.available },
      ctx.vectorSearch.kind === 'pgvector'
        ? 'knowledge bases: vectors are searched with pgvector'
        : vectorSupport.available
          ? 'knowledge bases: vectors are searched exactly; CREATE EXTENSION vector in this database enables pgvector'
          : 'knowledge bases: vectors are searched exactly (this server has no pgvector)',
    );
  }
  if (metrics !== undefined) {
    metrics.observeHttp(app);
    app.log.info({ url: metrics.url }, `metrics at ${metrics.url}`);
  }
  // Said once when the database stops answering in time, and once when it answers again (pg-db.ts).
  options.db.onReachability((reachable, error) => {
    if (reachable) app.log.info('the database answers again');
    else
      app.log.error({ reason: error instanceof Error ? error.message : String(error) }, 'the database is unreachable');
  });
  // A shutdown stops the worker taking runs at once; its tool calls in flight may finish for the drain's length.
  const running = runtime.running;
  if (running !== undefined && options.worker) {
    ctx.shutdown.onBegin((drainMs) => {
      running.stopWorker?.(drainMs).catch((error) => app.log.error({ err: error }, 'stopping the worker failed'));
    });
  }
  // The key watch stops, then the runtime closes: its workers before the gateway they call through.
  app.addHook('onClose', async () => {
    ctx.keys.stop();
    await runtime.close();
  });
  // An empty body sent as JSON (a client that always sets the header) counts as no body, not as an error.
  const jsonParser = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') return done(null, undefined);
    jsonParser(request, String(body), done);
  });
  echoRequestId(app);
  registerRequestLog(app, slowRequestMsFromEnv());
  addSharedSchemas(app);
  installValidators(app);
  registerErrorHandler(app, bodyLimit, MAX_NAME_LENGTH);
  // Operations that take a request without a body, and the role each needs, found as their routes are added,
  // for the document.
  const optionalBodies = new Set<string>();
  const roles = new Map<string, string>();
  const docs = new Map<string, OperationDoc>();
  app.addHook('onRoute', (route) => {
    const id = (route.schema as { operationId?: string } | undefined)?.operationId;
    const doc = operationDoc(route.schema);
    if (id !== undefined && doc) docs.set(id, doc);
    if (id !== undefined && takesOptionalBody(route.preValidation)) optionalBodies.add(id);
    const role = (route.config as { role?: string } | undefined)?.role;
    if (id !== undefined && role !== undefined) roles.set(id, role);
  });
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Maitento',
        version: '0.1.0',
        description: 'Deploy connectors and tools, manage secrets and keys, call tools through the gateway',
        license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
        contact: { name: 'Maitento', url: 'https://github.com/maitento/maitento/issues' },
      },
      tags: OPENAPI_TAGS,
      // The public URL when the operator set one (MT_PUBLIC_URL), else the address `mt serve` listens on by default.
      servers: [
        options.platformOrigin
          ? { url: options.platformOrigin, description: 'This server (MT_PUBLIC_URL)' }
          : { url: 'http://127.0.0.1:8080', description: 'mt serve on this machine (set MT_PUBLIC_URL to name yours)' },
      ],
      components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer' } } },
      security: [{ apiKey: [] }],
    },
    // Shared schemas keep their `$id` as their component name (`#/components/schemas/DeployPlan`).
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transformObject: (document) => {
      const openapi = 'openapiObject' in document ? document.openapiObject : document.swaggerObject;
      markOptionalBodies(openapi, optionalBodies);
      publishFileRoutes(openapi);
      documentOperations(openapi, docs, roles);
      declareHeaders(openapi);
      return openapi;
    },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await healthRoutes(app.withTypeProvider<WireTypes>(), ctx);
  // The auth providers' redirect URI: no API key (the link's state stands for it), so outside the key check.
  await app.register(async (callback) => connectionCallbackRoutes(callback.withTypeProvider<WireTypes>(), ctx), {
    prefix: '/v1',
  });
  // Inbound webhooks: no API key (the trigger's secret verifies each delivery), so outside the key check.
  await app.register(async (hooks) => hookRoutes(hooks.withTypeProvider<WireTypes>(), ctx), { prefix: '/v1' });
  await app.register(
    async (v1) => {
      registerAuth(v1, ctx);
      registerIdempotency(v1, ctx, {
        leaseSeconds: options.idempotencyLeaseSeconds ?? idempotencyLeaseSecondsFromEnv(),
      });
      for (const routes of [
        namespaceRoutes,
        keyRoutes,
        deployRoutes,
        authProviderRoutes,
        connectorRoutes,
        extopRoutes,
        agentRoutes,
        interactionRoutes,
        scheduleRoutes,
        triggerRoutes,
        secretRoutes,
        connectionRoutes,
        runRoutes,
        approvalRoutes,
        fileSystemRoutes,
        knowledgeBaseRoutes,
        auditRoutes,
        webhookRoutes,
      ]) {
        await routes(v1.withTypeProvider<WireTypes>(), ctx);
      }
    },
    { prefix: '/v1' },
  );
  // MCP over Streamable HTTP at /mcp and /mcp/agents/{name}, with the same API keys (docs/mcp.md).
  await app.register(async (mcp) => mcpRoutes(mcp, ctx, mcpSettingsFromEnv(options.mcp)));
  // The web console at /console: pages for people, on the same keys, roles and operations (docs/console.md).
  await app.register(async (web) => consoleRoutes(web, ctx));
  return app;
}
