import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { copyPgliteTemplate, createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { expect } from 'vitest';
import { requireBuiltCli, tempHome } from '../support/harness.js';
import { type Api, api } from './api.js';
import { runsRepoFiles } from './config-repo.js';
import { type ScenarioModel, startScenarioModel } from './model-script.js';
import { type ServeProcess, startServe, startWorker, type WorkerProcess } from './processes.js';
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
}

/**
 * Starts a fresh database (unless PGlite), a recording upstream, fake OpenAI and Anthropic models, the
 * real `mt serve` (and `mt worker`) processes wired to them, then creates the orders secret and deploys
 * the runs repo.
 */
export async function startRunsStack(options: RunsStackOptions = {}): Promise<RunsStack> {
  requireBuiltCli();
  // The set-up steps are independent of each other: made at the same time.
  const [home, db, dataDir, upstream, openai, anthropic] = await Promise.all([
    tempHome(),
    options.pglite ? undefined : createTestDatabase('mt_e2e_runs', { migrated: true }),
    options.pglite
      ? mkdtemp(join(tmpdir(), 'mt-e2e-pglite-')).then(async (dir) => {
          // An empty PGlite database already made, so `mt serve` skips initdb (pglite-serve.test.ts starts from
          // nothing).
          await copyPgliteTemplate(join(dir, 'pglite'));
          return dir;
        })
      : undefined,
    startUpstream(),
    startScenarioModel('openai'),
    startScenarioModel('anthropic'),
  ]);
  const adminKey = `mt_e2e_${randomBytes(18).toString('hex')}`;
  const env: Record<string, string> = {
    MT_SECRET_KEY: randomBytes(32).toString('hex'),
    MT_BOOTSTRAP_KEY: adminKey,
    OPENAI_BASE_URL: openai.server.url,
    OPENAI_API_KEY: 'test-openai-key',
    ANTHROPIC_BASE_URL: anthropic.server.url,
    ANTHROPIC_API_KEY: 'test-anthropic-key',
    MT_EGRESS_ALLOW: '127.0.0.1',
    ...(db ? { DATABASE_URL: options.databaseUrl?.(db.url) ?? db.url, ...options.databaseEnv?.(db.url) } : {}),
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
      const w = await startWorker(home, env);
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
      for (const dir of [home, dataDir]) if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    const count = options.servers ?? 1;
    // The first server migrates the database; the other servers and the workers start once it is ready, all at
    // once (each start is seconds of waiting on its own process).
    servers.push(await startServe(home, env, [...(dataDir ? ['--data', dataDir] : []), ...(options.serveArgs ?? [])]));
    const more = await Promise.allSettled([
      ...Array.from({ length: count - 1 }, async () => {
        servers.push(await startServe(home, env));
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
