import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { type PostgresServer, startPostgresServer, startTcpProxy, type TcpProxy } from '@maitento/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServe, startWorker, type WorkerProcess } from './helpers/processes.js';
import { requireBuiltCli, tempHome } from './support/harness.js';

// Readiness through a database outage (issue #48, test 4; docs/operations.md, "Readiness and liveness"): the real
// `mt serve` (with its worker) and `mt worker` (its health port) on a PostgreSQL server of this test's own, every
// connection through a TCP proxy. Two outages: the proxy stops forwarding (a black-holed network), then the server is
// stopped (SIGSTOP of its postmaster, so no new backend starts, and of every backend serving the database, found in
// pg_stat_activity). Measured from the fault, polling every 100 ms: `/health/ready` answers 503 within 5 s, stays 503
// while the outage lasts, and 200 again within 5 s of the recovery; `/health/live` answers 200 throughout; every probe
// is answered within 1 s. The server is this test's own because stopping the shared one's postmaster would stop every
// other test's database too.
const POLL_MS = 100;
/** The figures of the issue. */
const TURN_MS = 5000;
const ANSWER_MS = 1000;
/** How long an outage lasts once both processes said 503: past the store's deadline (MT_DB_TIMEOUT_MS, 1500 ms). */
const HOLD_MS = 4000;
const DATABASE = 'mt_e2e_outage';

let server: PostgresServer;
let admin: pg.Client;
let proxy: TcpProxy;
let home: string;
let serve: ServeProcess;
let worker: WorkerProcess;
let targets: { name: string; url: string }[];

beforeAll(async () => {
  requireBuiltCli();
  [server, home] = await Promise.all([startPostgresServer(), tempHome()]);
  proxy = await startTcpProxy({ host: '127.0.0.1', port: server.port });
  // The test's own connection (to another database): its backend is not stopped, so it can read pg_stat_activity
  // while the postmaster is.
  admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${DATABASE}`);
  const url = new URL(server.url);
  url.pathname = `/${DATABASE}`;
  const env = {
    DATABASE_URL: proxy.via(url.toString()),
    MT_SECRET_KEY: randomBytes(32).toString('hex'),
    MT_WORKER_HEALTH_PORT: '0',
    MT_DB_POOL_MAX: '5',
  };
  serve = await startServe(home, env);
  worker = await startWorker(home, env);
  const health = /health at (http:\/\/[\d.:]+)/.exec(worker.log())?.[1];
  if (health === undefined) throw new Error(`no health port in mt worker's log:\n${worker.log()}`);
  targets = [
    { name: 'mt serve', url: serve.url },
    { name: 'mt worker', url: health },
  ];
}, 90_000);

afterAll(async () => {
  proxy?.thaw();
  await Promise.all([serve?.stop(), worker?.stop()]);
  await admin?.end().catch(() => {});
  await proxy?.close();
  server?.stop();
  if (home) await rm(home, { recursive: true, force: true });
});

interface Probe {
  target: string;
  route: 'ready' | 'live';
  /** When it was sent and when it was answered, in milliseconds since the fault (or the recovery). */
  at: number;
  answeredAt: number;
  /** 0: no answer within 2 s (refused, reset, timed out). */
  status: number;
  ms: number;
}

async function probe(target: { name: string; url: string }, route: 'ready' | 'live', since: number): Promise<Probe> {
  const began = performance.now();
  let status = 0;
  try {
    const res = await fetch(`${target.url}/health/${route}`, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    status = res.status;
  } catch {
    status = 0;
  }
  const ended = performance.now();
  return {
    target: target.name,
    route,
    at: Math.round(began - since),
    answeredAt: Math.round(ended - since),
    status,
    ms: Math.round(ended - began),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls both routes of both processes every {@link POLL_MS} from `since` until `done(probes)` or `deadlineMs`;
 * returns every probe made.
 */
async function poll(since: number, deadlineMs: number, done: (probes: Probe[]) => boolean): Promise<Probe[]> {
  const probes: Probe[] = [];
  while (performance.now() - since < deadlineMs) {
    const tick = performance.now();
    probes.push(...(await Promise.all(targets.flatMap((t) => [probe(t, 'ready', since), probe(t, 'live', since)]))));
    if (done(probes)) break;
    await sleep(Math.max(0, POLL_MS - (performance.now() - tick)));
  }
  return probes;
}

/** When each process's readiness first answered `status` (ms since `since`, the answer's arrival), or undefined. */
function firstAt(probes: Probe[], status: number): Record<string, number | undefined> {
  return Object.fromEntries(
    targets.map((t) => [
      t.name,
      probes.find((p) => p.target === t.name && p.route === 'ready' && p.status === status)?.answeredAt,
    ]),
  );
}

/**
 * Runs one outage: `fault()` at t0, polling until both are unready, then for {@link HOLD_MS} more, then `recover()`,
 * polling until both are ready again; checks the figures.
 */
async function outage(fault: () => Promise<void> | void, recover: () => Promise<void> | void) {
  for (const t of targets) expect((await probe(t, 'ready', 0)).status, `${t.name} ready before`).toBe(200);
  const faultAt = performance.now();
  let during: Probe[] = [];
  let after: Probe[] = [];
  try {
    await fault();
    let allUnreadyAt: number | undefined;
    during = await poll(faultAt, TURN_MS + HOLD_MS + 2000, (probes) => {
      const first = Object.values(firstAt(probes, 503));
      if (allUnreadyAt === undefined && first.every((at) => at !== undefined)) allUnreadyAt = performance.now();
      return allUnreadyAt !== undefined && performance.now() - allUnreadyAt >= HOLD_MS;
    });
  } finally {
    const recoverAt = performance.now();
    await recover();
    after = await poll(recoverAt, TURN_MS + 2000, (probes) =>
      Object.values(firstAt(probes, 200)).every((at) => at !== undefined),
    );
  }
  const unready = firstAt(during, 503);
  const ready = firstAt(after, 200);
  const summary = JSON.stringify({ unready, ready });
  for (const t of targets) {
    expect(unready[t.name], `${t.name}: /health/ready 503 after the fault (ms) ${summary}`).toBeLessThanOrEqual(
      TURN_MS,
    );
    // Once unready, it stays so while the database cannot be reached.
    const later = during.filter(
      (p) => p.target === t.name && p.route === 'ready' && p.at >= (unready[t.name] ?? Number.POSITIVE_INFINITY),
    );
    expect(
      later.map((p) => p.status).filter((s) => s !== 503),
      `${t.name} during the outage`,
    ).toEqual([]);
    expect(ready[t.name], `${t.name}: /health/ready 200 after the recovery (ms) ${summary}`).toBeLessThanOrEqual(
      TURN_MS,
    );
  }
  for (const p of [...during, ...after]) {
    if (p.route === 'live') expect([p.target, p.at, p.status]).toEqual([p.target, p.at, 200]);
    else expect([p.target, p.at, [200, 503]]).toEqual([p.target, p.at, expect.arrayContaining([p.status])]);
    expect(p.ms, `${p.target} /health/${p.route} at ${p.at} ms`).toBeLessThan(ANSWER_MS);
  }
  return { unready, ready };
}

describe('readiness through a database outage', { timeout: 90_000 }, () => {
  it('a black-holed proxy: /health/ready 503 within 5 s and 200 within 5 s of the thaw, /health/live 200, each < 1 s', async () => {
    await outage(
      () => proxy.freeze(),
      () => proxy.thaw(),
    );
  });

  it('the database server SIGSTOPped: the same figures, and after SIGCONT', async () => {
    const postmaster = server.pid;
    const stopped: number[] = [];
    await outage(
      async () => {
        // The postmaster first (no new backend), then every backend serving the database.
        process.kill(postmaster, 'SIGSTOP');
        stopped.push(postmaster);
        const { rows } = await admin.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'`,
          [DATABASE],
        );
        expect(rows.length, 'backends serving the database').toBeGreaterThan(0);
        for (const { pid } of rows) {
          process.kill(pid, 'SIGSTOP');
          stopped.push(pid);
        }
      },
      () => {
        for (const pid of stopped.reverse()) process.kill(pid, 'SIGCONT');
        stopped.length = 0;
      },
    ).finally(() => {
      for (const pid of stopped) process.kill(pid, 'SIGCONT');
    });
  });
});
