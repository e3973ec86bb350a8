import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createEgressPolicy } from '@maitento/egress';
import { createGateway, type Gateway } from '@maitento/gateway';
import {
  createEngine,
  type EngineOptions,
  modelsFromEnvironment,
  type RunningEngine,
  type RunView,
} from '@maitento/engine';
import { compileRepo } from '@maitento/lang';
import { createNamespace, createPgDb, createPgliteDb, createSecret, type Db, deploy, migrate } from '@maitento/store';
import {
  copyPgliteTemplate,
  createTestDatabase,
  type OrdersRepoOptions,
  ordersRepo,
  type RepoFile,
  scriptedModels,
  startRecordingUpstream,
  type TestDatabase,
  waitFor as waitUntil,
} from '@maitento/testkit';

/** One request an upstream saw. */
export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** How a test upstream answers one request: a status (default 200), a JSON body, and a promise to wait for first. */
export type UpstreamAnswer = (req: Seen) => { status?: number; body: unknown; wait?: Promise<unknown> };

/** The upstream of {@link startUpstream}. */
export interface TestUpstream {
  url: string;
  seen: Seen[];
  delayMs: number;
  aborted: number;
  close(): Promise<void>;
}

/**
 * A real HTTP upstream on 127.0.0.1 that records requests; `delayMs` slows answers, an answer's `wait`
 * holds it until it settles, and `aborted` counts requests whose client went away before the answer.
 */
export async function startUpstream(answer: UpstreamAnswer = () => ({ body: { ok: true } })): Promise<TestUpstream> {
  const state = { delayMs: 0, aborted: 0 };
  const upstream = await startRecordingUpstream(async (seen, res) => {
    const reply = answer(seen);
    res.on('close', () => {
      if (!res.writableFinished) state.aborted++;
    });
    await new Promise((resolve) => setTimeout(resolve, state.delayMs));
    await reply.wait;
    if (res.destroyed) return;
    res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(reply.body));
  });
  return {
    url: upstream.origin,
    get seen() {
      return upstream.requests;
    },
    get delayMs() {
      return state.delayMs;
    },
    get aborted() {
      return state.aborted;
    },
    set delayMs(ms: number) {
      state.delayMs = ms;
    },
    close: () => upstream.close(),
  };
}

/**
 * A fresh PGlite database in a temporary folder, copied from the machine's template (`copyPgliteTemplate` of
 * `@maitento/testkit`: no initdb). The folder is removed when the database closes.
 */
export async function freshPglite(): Promise<Db> {
  const dir = mkdtempSync(join(tmpdir(), 'mt-pglite-'));
  await copyPgliteTemplate(dir);
  const db = await createPgliteDb(dir);
  const close = db.close.bind(db);
  return Object.assign(db, {
    async close() {
      await close();
      rmSync(dir, { recursive: true, force: true });
    },
  });
}

/** A database with the schema, a namespace, a gateway allowed to call 127.0.0.1, and a scripts folder. */
export interface World {
  db: Db;
  ns: string;
  secretKey: Buffer;
  gateway: Gateway;
  scriptsDir: string;
  engines: RunningEngine[];
  /** Writes `scripted:NAME`'s script. */
  script(name: string, turns: unknown[]): void;
  /** Compiles and deploys `files` to the namespace. */
  deployFiles(files: { path: string; content: string }[]): Promise<void>;
  secret(name: string, value: string): Promise<string>;
  engine(options?: Partial<EngineOptions>): Promise<RunningEngine>;
  close(): Promise<void>;
}

/** Makes a {@link World} on a fresh PostgreSQL database (or on `db` when given). */
export async function makeWorld(given?: Db): Promise<World> {
  let database: TestDatabase | undefined;
  let db = given;
  if (db === undefined) {
    database = await createTestDatabase('mt_engine', { migrated: true });
    db = createPgDb(database.url);
  }
  await migrate(db);
  const ns = 'acme';
  await createNamespace(db, ns);
  const egress = createEgressPolicy({ allow: '127.0.0.1/32' });
  const gateway = createGateway({ policy: egress });
  const scripts = scriptedModels();
  const scriptsDir = scripts.dir;
  const secretKey = randomBytes(32);
  const world: World = {
    db,
    ns,
    secretKey,
    gateway,
    scriptsDir,
    engines: [],
    script: scripts.script,
    async deployFiles(files) {
      const compiled = compileRepo(files, { egress, knownSecrets: ['orders-key', 'shop-key'] });
      if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics, null, 2));
      await deploy(db!, ns, compiled);
    },
    async secret(name, value) {
      return (await createSecret(db!, secretKey, ns, { name, value })).id;
    },
    async engine(options = {}) {
      const engine = await createEngine({
        db: db!,
        secretKey,
        gateway,
        worker: { concurrency: 8 },
        models: modelsFromEnvironment({ scriptsDir }),
        modelRetries: 0,
        // MT_TEST_ENGINE_LOG=1 prints the engine's warnings and errors while debugging a test.
        logger: process.env.MT_TEST_ENGINE_LOG
          ? { info: () => {}, warn: (o, m) => console.warn(m, o), error: (o, m) => console.error(m, o) }
          : undefined,
        ...options,
      });
      world.engines.push(engine);
      return engine;
    },
    async close() {
      for (const engine of world.engines) await engine.close().catch(() => {});
      await gateway.close();
      await db!.close();
      await database?.drop();
    },
  };
  return world;
}

/** Polls the run until `done(run)` (default: it ended or waits), at most `ms`; the error names the run's events. */
export async function waitFor(
  engine: RunningEngine,
  ns: string,
  id: string,
  done: (run: RunView) => boolean = (run) => run.status !== 'Running',
  ms = 10_000,
): Promise<RunView> {
  return waitUntil(() => engine.getRun(ns, id), done, {
    timeoutMs: ms,
    describe: async (run) => {
      const events = await engine.listEvents(ns, id);
      return `run ${id} still ${run?.status} after ${ms} ms; events: ${events.map((e) => e.type).join(', ')}`;
    },
  });
}

/** The orders world of {@link ordersWorld}: its `world.close()` closes the upstream too. */
export interface OrdersWorld {
  world: World;
  upstream: TestUpstream;
}

/**
 * The orders world most engine tests share: an upstream on 127.0.0.1 answering with `answer`, a {@link World} (on
 * `db` when given) with the secret `orders-key`, and testkit's orders repo deployed against the upstream (`repo`
 * changes its options, `files` the files).
 */
export async function ordersWorld(
  answer: UpstreamAnswer,
  options: { db?: Db; repo?: Omit<OrdersRepoOptions, 'origin'>; files?: (files: RepoFile[]) => RepoFile[] } = {},
): Promise<OrdersWorld> {
  const upstream = await startUpstream(answer);
  const world = await makeWorld(options.db).catch(async (error: unknown) => {
    await upstream.close();
    throw error;
  });
  const close = world.close.bind(world);
  world.close = async () => {
    await close();
    await upstream.close();
  };
  await world.secret('orders-key', 'sk-orders-123');
  const files = ordersRepo({ origin: upstream.url, ...options.repo });
  await world.deployFiles(options.files ? options.files(files) : files);
  return { world, upstream };
}
