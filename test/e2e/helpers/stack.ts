import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  copyPgliteTemplate,
  createTestDatabase,
  type PgBouncer,
  startPgBouncer,
  TEST_SERVER_URL,
  type TestDatabase,
} from '@maitento/testkit';
import pg from 'pg';
import { afterAll, beforeAll, expect } from 'vitest';
import { requireBuiltCli, runMt, tempHome } from '../support/harness.js';
import { type Api, api } from './api.js';
import { runsRepoFiles } from './config-repo.js';
import { type ScenarioModel, startScenarioModel } from './model-script.js';
import { type ServeProcess, startServe, startWorker, type WorkerProcess } from './processes.js';
import { step } from './steps.js';
import { startUpstream, type Upstream } from './upstream.js';

/** The value of the orders-api-key secret; it must never appear in a response, event or log. */
export const ORDERS_SECRET = 'sk-orders-e2e-5c1f9a7d3b';

/** Everything one e2e file of runs uses: database, upstream, fake models, server processes. */
export interface RunsStack {
  home: string;
  adminKey: string;
  /** The environment the processes got (to start more of them). */
  env: Record<string, string>;
  db: TestDatabase | undefined;
  upstream: Upstream;
  openai: ScenarioModel;
  anthropic: ScenarioModel;
  servers: ServeProcess[];
  workers: WorkerProcess[];
  /** A client of the first server. */
  api: Api;
  /** Starts one more `mt worker` on the same database. */
  addWorker(): Promise<WorkerProcess>;
  /** Stops everything and drops the database. */
  close(): Promise<void>;
}

/** Options of {@link startRunsStack}. */
export interface RunsStackOptions {
  /** `mt serve` processes (default 1). */
  servers?: number;
  /** `mt worker` processes (default 0; PostgreSQL only). */
  workers?: number;
  /** PGlite in a temporary --data folder instead of PostgreSQL. */
  pglite?: boolean;
  /** Extra environment of every process. */
  env?: Record<string, string>;
  /** Whether to create the orders secret and deploy the runs repo (default true). */
  deploy?: boolean;
  /** The DATABASE_URL the processes get, from the test database's (default: it): e.g. through a TCP proxy. */
  databaseUrl?: (url: string) => string;
  /** More environment of every process made from the test database's URL (e.g. MT_DIRECT_DATABASE_URL). */
  databaseEnv?: (url: string) => Record<string, string>;
  /** Extra arguments of the first `mt serve` (e.g. `--no-worker`). */
  serveArgs?: string[];
  /**
   * The `mt` executable of every process the stack starts (default this repository's; another release's, see
   * helpers/previous-release.ts). With it the database starts empty and the first process migrates it.
   */
  mt?: string;
}

/**
 * How the stacks' processes reach PostgreSQL, for running test files again another way (docs/testing.md, "The same
 * tests another way"): `MT_E2E_DATABASE=pgbouncer-transaction` puts Debian's PgBouncer in transaction mode between
 * them and the database (DATABASE_URL the pooler's, MT_DIRECT_DATABASE_URL the server's); `runtime-role` has the
 * database owned by a role of its own that runs `mt migrate --grant-runtime`, and the processes log in as a runtime
 * role with no superuser and no CREATE, with MT_MIGRATE=off. Unset (`direct`), they connect as the tests' superuser.
 * A stack that sets its own database URL, another release's `mt` or PGlite is not changed.
 */
export type E2eDatabaseMode = 'direct' | 'pgbouncer-transaction' | 'runtime-role';

export function e2eDatabaseMode(): E2eDatabaseMode {
  const mode = process.env.MT_E2E_DATABASE ?? 'direct';
  if (mode !== 'direct' && mode !== 'pgbouncer-transaction' && mode !== 'runtime-role')
    throw new Error(`MT_E2E_DATABASE=${mode}: not direct, pgbouncer-transaction or runtime-role`);
  return mode;
}

/** What a stack made for its database mode, and how to undo it once its database is dropped. */
interface DatabaseWay {
  env: Record<string, string>;
  close(): Promise<void>;
}

/**
 * Sets `db` up for `mode`: the processes' environment (DATABASE_URL and the rest) and what to undo at the end. The
 * database is empty for `runtime-role` (its owner migrates it) and migrated otherwise.
 */
async function databaseWay(mode: E2eDatabaseMode, db: TestDatabase, home: string): Promise<DatabaseWay> {
  if (mode === 'pgbouncer-transaction') {
    const bouncer: PgBouncer = await startPgBouncer({ mode: 'transaction', poolSize: 8 });
    return {
      env: { DATABASE_URL: bouncer.through(db.url), MT_DIRECT_DATABASE_URL: db.url },
      close: () => bouncer.stop(),
    };
  }
  if (mode === 'runtime-role') {
    const owner = `${db.name}_owner`;
    const runtime = `${db.name}_rt`;
    const as = (role: string) => {
      const url = new URL(db.url);
      url.username = role;
      url.password = '';
      return url.toString();
    };
    const admin = new pg.Client({ connectionString: TEST_SERVER_URL });
    await admin.connect();
    try {
      // The owner owns the database (so it may create pg-boss's schema); the runtime role is a plain login.
      await admin.query(`CREATE ROLE "${owner}" LOGIN`);
      await admin.query(`CREATE ROLE "${runtime}" LOGIN NOINHERIT`);
      await admin.query(`ALTER DATABASE "${db.name}" OWNER TO "${owner}"`);
    } finally {
      await admin.end();
    }
    const migrated = await runMt(['migrate', '--database-url', as(owner), '--grant-runtime', runtime], { home });
    if (migrated.code !== 0) throw new Error(`mt migrate as the owner failed:\n${migrated.stderr}`);
    return {
      env: { DATABASE_URL: as(runtime), MT_MIGRATE: 'off' },
      async close() {
        const c = new pg.Client({ connectionString: TEST_SERVER_URL });
        await c.connect();
        try {
          for (const role of [runtime, owner]) await c.query(`DROP ROLE IF EXISTS "${role}"`);
        } finally {
          await c.end();
        }
      },
    };
  }
  return { env: { DATABASE_URL: db.url }, close: async () => {} };
}

/**
 * Starts a fresh database (unless PGlite), a recording upstream, fake OpenAI and Anthropic models, the
 * real `mt serve` (and `mt worker`) processes wired to them, then creates the orders secret and deploys
 * the runs repo.
 */
export async function startRunsStack(options: RunsStackOptions = {}): Promise<RunsStack> {
  requireBuiltCli();
  // The way to the database MT_E2E_DATABASE asks for, unless the stack names its own.
  const mode =
    options.pglite ||
    options.mt !== undefined ||
    options.databaseUrl !== undefined ||
    options.databaseEnv !== undefined ||
    options.env?.DATABASE_URL !== undefined
      ? 'direct'
      : e2eDatabaseMode();
  // The set-up steps are independent of each other: made at the same time.
  const [home, db, dataDir, upstream, openai, anthropic] = await Promise.all([
    step('temp home', () => tempHome()),
    options.pglite
      ? undefined
      : step('create database', () =>
          createTestDatabase('mt_e2e_runs', { migrated: options.mt === undefined && mode !== 'runtime-role' }),
        ),
    options.pglite
      ? mkdtemp(join(tmpdir(), 'mt-e2e-pglite-')).then(async (dir) => {
          // An empty PGlite database already made, so `mt serve` skips initdb (pglite-serve.test.ts starts from
          // nothing).
          await copyPgliteTemplate(join(dir, 'pglite'));
          return dir;
        })
      : undefined,
    step('upstream', () => startUpstream()),
    step('fake OpenAI', () => startScenarioModel('openai')),
    step('fake Anthropic', () => startScenarioModel('anthropic')),
  ]);
  const adminKey = `mt_e2e_${randomBytes(18).toString('hex')}`;
  const way = db ? await step(`database way ${mode}`, () => databaseWay(mode, db, home)) : undefined;
  const env: Record<string, string> = {
    MT_SECRET_KEY: randomBytes(32).toString('hex'),
    MT_BOOTSTRAP_KEY: adminKey,
    OPENAI_BASE_URL: openai.server.url,
    OPENAI_API_KEY: 'test-openai-key',
    ANTHROPIC_BASE_URL: anthropic.server.url,
    ANTHROPIC_API_KEY: 'test-anthropic-key',
    MT_EGRESS_ALLOW: '127.0.0.1',
    ...(db
      ? mode === 'direct'
        ? { DATABASE_URL: options.databaseUrl?.(db.url) ?? db.url, ...options.databaseEnv?.(db.url) }
        : way?.env
      : {}),
    ...options.env,
  };
  const servers: ServeProcess[] = [];
  const workers: WorkerProcess[] = [];
  const stack: RunsStack = {
    home,
    adminKey,
    env,
    db,
    upstream,
    openai,
    anthropic,
    servers,
    workers,
    api: undefined as unknown as Api,
    addWorker: async () => {
      const w = await startWorker(home, env, options.mt);
      workers.push(w);
      return w;
    },
    close: async () => {
      // MT_E2E_LOGS=1 prints what every process wrote, to see why a run went wrong.
      if (process.env.MT_E2E_LOGS)
        for (const p of [...servers, ...workers]) console.error(`--- pid ${p.pid}\n${p.log()}`);
      await Promise.all([...servers, ...workers].map((p) => p.stop()));
      await Promise.all([upstream.close(), openai.server.close(), anthropic.server.close()]);
      await db?.drop();
      await way?.close();
      for (const dir of [home, dataDir]) if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    const count = options.servers ?? 1;
    // The first server migrates the database; the other servers and the workers start once it is ready, all at
    // once (each start is seconds of waiting on its own process).
    servers.push(
      await step('first mt serve', () =>
        startServe(home, env, [...(dataDir ? ['--data', dataDir] : []), ...(options.serveArgs ?? [])], options.mt),
      ),
    );
    const more = await Promise.allSettled([
      ...Array.from({ length: count - 1 }, async () => {
        servers.push(await startServe(home, env, [], options.mt));
      }),
      ...Array.from({ length: options.workers ?? 0 }, () => stack.addWorker()),
    ]);
    const failed = more.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    stack.api = api(servers[0].url, adminKey);
    if (options.deploy !== false) {
      const secret = await stack.api.request('POST', '/v1/secrets', { name: 'orders-api-key', value: ORDERS_SECRET });
      expect(secret.status, JSON.stringify(secret.body)).toBe(201);
      await stack.api.deploy(runsRepoFiles({ origin: upstream.origin }));
    }
  } catch (error) {
    await stack.close();
    throw error;
  }
  return stack;
}

/** What {@link useRunsStack} does around the stack it starts. */
export interface UseRunsStack {
  /** How long the start may take (the `beforeAll` hook's deadline; default 90 s). */
  timeoutMs?: number;
  /** Done before the stack closes (e.g. releasing what a fake model holds). */
  closing?: (stack: RunsStack) => void | Promise<void>;
}

/**
 * An e2e file's runs stack: started in a `beforeAll` (by {@link startRunsStack} with `start`'s options, or by `start`
 * itself) and closed in an `afterAll`. Answers the stack, to use from the tests and hooks on (a property set on it is
 * set on the stack); using it before the start has finished throws.
 */
export function useRunsStack(
  start: RunsStackOptions | (() => Promise<RunsStack>) = {},
  around: UseRunsStack = {},
): RunsStack {
  let stack: RunsStack | undefined;
  beforeAll(async () => {
    stack = typeof start === 'function' ? await start() : await startRunsStack(start);
  }, around.timeoutMs ?? 90_000);
  afterAll(async () => {
    if (stack === undefined) return;
    try {
      await around.closing?.(stack);
    } finally {
      await stack.close();
    }
  });
  const started = (key: string | symbol): RunsStack => {
    if (stack === undefined) throw new Error(`the runs stack's ${String(key)} was used before the stack started`);
    return stack;
  };
  // Reads and writes go to the started stack (a test may point `api` at another server).
  return new Proxy({} as RunsStack, {
    get: (_, key) => Reflect.get(started(key), key),
    set: (_, key, value) => Reflect.set(started(key), key, value),
  });
}
