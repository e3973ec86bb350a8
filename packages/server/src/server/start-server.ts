import type { EgressPolicy } from '@maitento/egress';
import { DEFAULT_DATA_DIR, type Db, resolveSecretKey, type SecretKeyCheck } from '@maitento/store';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { join } from 'node:path';
import { bootstrapDatabase, createServer, type ServerOptions } from './create-server.js';
import { openPreparedDatabase } from './runtime.js';
import {
  bootstrapKeyFromEnv,
  databaseUrlFromEnv,
  migrateModeFromEnv,
  publicUrlFromEnv,
  secretKeysFromEnv,
  shutdownSettingsFromEnv,
} from './settings.js';
import { ShutdownState, shutdownPlan } from './shutdown.js';

/** Options of {@link startServer}; every one has a default from the environment. */
export interface StartServerOptions {
  port?: number;
  host?: string;
  /** PostgreSQL; default `DATABASE_URL`. Without one, PGlite in `dataDir`. */
  databaseUrl?: string;
  /** PGlite data folder (default `.maitento/data`). */
  dataDir?: string;
  /** Default `MT_SECRET_KEY`. */
  secretKey?: string;
  /** Default `MT_SECRET_KEY_PREVIOUS`: the keys a master key rotation moves away from (comma-separated). */
  previousSecretKeys?: string;
  /** Default `MT_BOOTSTRAP_KEY`. */
  bootstrapKey?: string;
  /** Default `MT_PUBLIC_URL`. */
  platformOrigin?: string;
  egress?: EgressPolicy;
  logger?: FastifyServerOptions['logger'];
  /** Where messages for the operator go (default stderr). */
  message?: (line: string) => void;
  /** The worker this process runs beside the API (default: one, `MT_WORKER_CONCURRENCY` runs at once); false for none. */
  worker?: ServerOptions['worker'];
}

/** A listening server. */
export interface RunningServer {
  app: FastifyInstance;
  db: Db;
  /** `http://host:port` it listens on. */
  url: string;
  /** Stops listening and closes the database. */
  close(): Promise<void>;
  /**
   * Stops as on SIGTERM (docs/operations.md, "Shutdown"): readiness false at once and the worker takes no more runs;
   * the listener answers for `MT_SHUTDOWN_UNREADY_MS` (not after SIGINT: a person at a terminal, no load balancer), then
   * closes; tool calls in flight may finish until the drain's
   * end, then their runs are handed back; resolves when all is closed (within `graceMs` unless something hangs).
   */
  shutdown(signal?: NodeJS.Signals): Promise<void>;
  /** `MT_SHUTDOWN_GRACE_MS`: the caller exits this long after it called `shutdown`, whatever is left. */
  readonly graceMs: number;
}

/** Tells the operator what the startup check of the master keys converted or what can be retired. */
function tellKeyCheck(check: SecretKeyCheck, message: (line: string) => void): void {
  if (check.converted > 0) {
    message(`Converted ${check.converted} secrets to envelope encryption under master key ${check.currentKeyId}`);
  }
  const old = Object.keys(check.secretsByKeyId).filter((id) => id !== check.currentKeyId);
  if (old.length > 0) {
    message(`Secrets are still under previous master keys ${old.join(', ')}: run \`mt secret-key-rotate\``);
  }
  if (check.unusedPreviousKeyIds.length > 0) {
    message(
      `No secret is under previous master key ${check.unusedPreviousKeyIds.join(', ')}: it can be retired from MT_SECRET_KEY_PREVIOUS`,
    );
  }
}

/**
 * This server's own origin for platform tools when `MT_PUBLIC_URL` is unset: `http://HOST:PORT`, a wildcard host
 * reached on loopback; none on port 0 (the port is known only once listening, after the gateway is made).
 */
export function ownOrigin(host: string, port: number): string | undefined {
  if (port === 0) return undefined;
  const reach = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${reach.includes(':') ? `[${reach}]` : reach}:${port}`;
}

/**
 * Opens the database (`DATABASE_URL` → PostgreSQL, else PGlite in the data folder), finds the secret
 * key, builds the server and listens; refuses to start on PostgreSQL without `MT_SECRET_KEY`.
 */
export async function startServer(options: StartServerOptions = {}): Promise<RunningServer> {
  const env = secretKeysFromEnv();
  const message = options.message ?? ((line: string) => process.stderr.write(`${line}\n`));
  const databaseUrl = options.databaseUrl ?? databaseUrlFromEnv();
  const dataDir = options.dataDir ?? DEFAULT_DATA_DIR;
  const key = resolveSecretKey({
    value: options.secretKey ?? env.value,
    previous: options.previousSecretKeys ?? env.previous,
    dataDir: databaseUrl ? undefined : dataDir,
  });
  if (key.warning) message(`warning: ${key.warning}`);
  // Read before the database opens: a bad MT_MIGRATE (api:server:migrate-invalid) stops the start with nothing to close.
  const migrateMode = migrateModeFromEnv();
  // Stored secrets must open with the keys given: refuse to start (naming the missing key id) rather than fail calls.
  const db = await openPreparedDatabase({
    open: databaseUrl ? { databaseUrl, applicationName: 'mt-serve' } : { dataDir: join(dataDir, 'pglite') },
    migrate: migrateMode,
    secretKey: key.keyring,
    onKeyCheck: (check) => tellKeyCheck(check, message),
  });
  let app: FastifyInstance | undefined;
  const plan = shutdownPlan(shutdownSettingsFromEnv());
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 8080;
  const shutdown = new ShutdownState();
  try {
    app = await createServer({
      db,
      secretKey: key.keyring,
      egress: options.egress,
      // Platform tools call MT_PUBLIC_URL; unset, this server's own address (known before it listens on a fixed port).
      platformOrigin: options.platformOrigin ?? publicUrlFromEnv() ?? ownOrigin(host, port),
      logger: options.logger,
      worker: options.worker ?? {},
      bootstrap: false,
      migrate: false,
      shutdown,
    });
    await app.listen({ port, host });
    const address = app.server.address();
    const listening = typeof address === 'object' && address !== null ? address.port : port;
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${listening}`;
    // Only a server that listens makes (and prints) the first admin key: one that cannot start loses none.
    await bootstrapDatabase(db, {
      bootstrapKey: options.bootstrapKey ?? bootstrapKeyFromEnv(),
      onBootstrapKey: (k) =>
        message(
          `Created namespace "default" and its first admin key (shown once, keep it):\n  ${k}\n` +
            `Sign in to the web console at ${url}/console with it.`,
        ),
    });
    const started = app;
    const close = async () => {
      await started.close();
      await db.close();
    };
    return {
      app: started,
      db,
      url,
      close,
      graceMs: plan.graceMs,
      async shutdown(signal) {
        const begun = performance.now();
        shutdown.begin(plan.drainMs);
        const unreadyMs = signal === 'SIGINT' ? 0 : plan.unreadyMs;
        started.log.info({ ...plan, unreadyMs }, 'shutting down: readiness false, no new runs taken');
        if (unreadyMs > 0) await new Promise((resolve) => setTimeout(resolve, unreadyMs));
        // Closed to new connections; requests in flight may end until the drain's end, then their connections are cut.
        const cut = setTimeout(
          () => started.server.closeAllConnections(),
          Math.max(0, plan.drainMs - (performance.now() - begun)),
        );
        try {
          await close();
        } finally {
          clearTimeout(cut);
        }
      },
    };
  } catch (error) {
    await app?.close().catch(() => undefined);
    await db.close();
    throw error;
  }
}
