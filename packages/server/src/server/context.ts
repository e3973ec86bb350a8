import type { ShutdownState } from './shutdown.js';
import type { EgressPolicy } from '@maitento/egress';
import type { EmbeddingModel, Engine, RunTelemetry } from '@maitento/engine';
import type { Gateway, OAuthClient } from '@maitento/gateway';
import type {
  CacheLease,
  Db,
  FileLimits,
  KeyIdentity,
  SecretKeys,
  StoreCache,
  VectorSearch,
  Wakeups,
} from '@maitento/store';
import type { EmbeddingWorker, ExtractBudget } from '../knowledge/index.js';
import type { EventStreamTiming } from '../streams/event-stream.js';
import type { KeyWatch } from '../streams/key-watch.js';
import type { PerKeyLimit } from '../streams/per-key-limit.js';

/** What every route plugin needs: the database, the secret key, the gateway, the egress policy and the run engine. */
export interface ServerContext {
  db: Db;
  /** The cached reads of the call path (keys, versions, secrets). */
  cache: StoreCache;
  /**
   * The process's cache lease: a route that wrote a key, a secret or a version (the epoch's triggers, schema 7)
   * awaits `lease.settle()` before it answers, so every server's next request sees the write.
   */
  lease: CacheLease;
  /** The master key, or the keyring (current and previous keys) of a master key rotation. */
  secretKey: SecretKeys;
  gateway: Gateway;
  /** The OAuth 2 client of auth providers (connect links and their callbacks), made on first use. */
  oauth: () => OAuthClient;
  egress: EgressPolicy;
  /** The server's own public origin, handed to the compiler for `auth = "Maitento"` connectors. */
  platformOrigin?: string;
  /** Runs and approvals. */
  engine: Engine;
  /**
   * The setting a model's provider lacks in this process (`OPENAI_API_KEY`...), for a deploy's warnings; absent when
   * the engine's models are not the environment's (a test's resolver).
   */
  modelSettingMissing?: (spec: string) => string | undefined;
  /** The process's OpenTelemetry (direct tool calls are traced with it); undefined when it is off. */
  telemetry?: RunTelemetry;
  /** The fallback poll of run event streams (they wake on `run:<id>`), and their keep-alive interval. */
  streamTiming: EventStreamTiming;
  /**
   * The run event streams each API key holds open, REST's and the console's alike, one count per key: one more than
   * `MT_RUN_STREAMS_PER_KEY` is refused.
   */
  runStreams: PerKeyLimit;
  /** The process's wake-ups (`mt_wake`): what waits (streams, MCP approval waits, list changes) subscribes here. */
  wakeups: Wakeups;
  /** Whether this process is shutting down: readiness says so first (docs/operations.md, "Shutdown"). */
  shutdown: ShutdownState;
  /** The embedding model of knowledge bases (MT_EMBEDDING_MODEL); none: full-text search alone. */
  embeddingModel?: EmbeddingModel;
  /** How a hybrid search finds the nearest vectors: pgvector where the database has it installed, else exact. */
  vectorSearch: VectorSearch;
  /** This process's embedding worker, woken when a document is added (none without a worker or a model). */
  embeddingWorker?: EmbeddingWorker;
  /** The largest document a knowledge base takes, in bytes (MT_KB_DOCUMENT_LIMIT, default 20 MiB). */
  knowledgeDocumentLimit: number;
  /** What reading one uploaded document may take (MT_KB_EXTRACT_*). */
  knowledgeExtractBudget: ExtractBudget;
  /** Ends what a key opened (streams, MCP sessions) when the key is deleted. */
  keys: KeyWatch;
  /** The largest file and the most one file system may hold, in bytes. */
  fileLimits: FileLimits;
}

/**
 * Who may call a route (docs/roles.md; the key roles each admits: `ROUTE_ACCESS` in plugins/auth.ts): `read` every
 * key of the namespace, `run` the keys that start runs and call tools, `answer` the keys that answer approvals,
 * `admin` an admin key, `operator` an admin key of `default`.
 */
export type RouteRole = 'read' | 'run' | 'answer' | 'admin' | 'operator';

declare module 'fastify' {
  interface FastifyRequest {
    /** The namespace, key and role of the request's API key, set by the auth hook. */
    identity: KeyIdentity;
  }
  interface FastifyContextConfig {
    /** Who may call the route (`read` when absent). */
    role?: RouteRole;
  }
}
