// npm run bench:idle — how many transactions an idle `mt serve` and an idle `mt worker` commit a second. Each process
// runs alone on a database of its own (nothing else connects to it); the figure is the growth of that database's
// `pg_stat_database.xact_commit` over the window (BENCH_IDLE_SECONDS, 60 s), read from a connection to another
// database so the measuring queries are not counted. A backend reports its counts at most every second and within
// 10 s when idle, so the window starts after a settling time (BENCH_IDLE_SETTLE_SECONDS, 15 s). Prints the figures and
// writes them into docs/performance.md (its `bench:idle` section). Needs the built CLI (`npm run build`) and
// PostgreSQL (MT_TEST_PG_URL, default the local one).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, TEST_SERVER_URL } from '@maitento/testkit';
import pg from 'pg';
import { provenance, writeBenchSection } from './lib/perf-doc.js';

const SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
const SETTLE_SECONDS = Number(process.env.BENCH_IDLE_SETTLE_SECONDS ?? 15);
const MT = fileURLToPath(new URL('../packages/cli/bin/mt.js', import.meta.url));
const ADMIN_URL = TEST_SERVER_URL;

/** Starts `mt <args>` with a clean environment plus `env`; resolves once its stderr matches `ready`. */
async function start(args, env, ready) {
  const home = await mkdtemp(join(tmpdir(), 'mt-idle-'));
  const child = spawn(process.execPath, [MT, ...args], {
    cwd: home,
    env: { PATH: process.env.PATH ?? '', HOME: home, NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout.on('data', (c) => {
    log += c.toString();
  });
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`mt ${args[0]} did not start in 60 s:\n${log}`)), 60_000);
    child.stderr.on('data', (c) => {
      log += c.toString();
      if (ready.test(log)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`mt ${args[0]} exited with ${code}:\n${log}`));
    });
  });
  child.removeAllListeners('exit');
  return {
    log: () => log,
    async stop() {
      const done = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await done;
      clearTimeout(timer);
      await rm(home, { recursive: true, force: true });
    },
  };
}

/** The committed transactions of database `name` so far, read on `admin` (a connection to another database). */
async function commits(admin, name) {
  const { rows } = await admin.query('SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = $1', [name]);
  return Number(rows[0].n);
}

/** Idle commits a second of one `mt` process alone on a fresh database. */
async function measure(admin, what, args, ready, prepare) {
  const db = await createTestDatabase('mt_idle');
  try {
    const env = {
      DATABASE_URL: db.url,
      MT_SECRET_KEY: randomBytes(32).toString('hex'),
      MT_BOOTSTRAP_KEY: `mt_${randomBytes(24).toString('hex')}`,
    };
    await prepare?.(env);
    const proc = await start(args, env, ready);
    try {
      await new Promise((resolve) => setTimeout(resolve, SETTLE_SECONDS * 1000));
      const before = await commits(admin, db.name);
      const t0 = performance.now();
      await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
      const after = await commits(admin, db.name);
      const seconds = (performance.now() - t0) / 1000;
      const perSecond = (after - before) / seconds;
      console.log(`${what}: ${after - before} commits in ${seconds.toFixed(1)} s = ${perSecond.toFixed(2)} a second`);
      return { what, commits: after - before, seconds, perSecond };
    } finally {
      await proc.stop();
    }
  } finally {
    await db.drop();
  }
}

const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
try {
  console.log(
    `bench:idle: ${SECONDS} s windows after ${SETTLE_SECONDS} s; ${cpus()[0]?.model ?? 'cpu'} x${availableParallelism()}, ` +
      `load ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
  );
  const results = [
    await measure(
      admin,
      '`mt serve` (with its worker)',
      ['serve', '--port', '0', '--host', '127.0.0.1'],
      /listening on/,
    ),
    // A worker alone on a database, as in a fleet: it migrates the database itself.
    await measure(admin, '`mt worker`', ['worker'], /executing runs/),
  ];
  const rows = results.map(
    (r) =>
      `| ${r.what} | ${r.commits} | ${r.seconds.toFixed(1)} | ${r.perSecond.toFixed(2)} | ${r.perSecond <= 1 ? 'met' : 'not met'} |`,
  );
  const section = [
    '## Idle processes (`npm run bench:idle`)',
    '',
    provenance('npm run bench:idle'),
    '',
    `Each process alone on a fresh database, nobody calling it, after ${SETTLE_SECONDS} s of settling; the figure is`,
    "the growth of that database's `pg_stat_database.xact_commit` over the window, read from another database.",
    "What an idle process still does is in docs/architecture.md's timer table.",
    '',
    '| Process | Commits | Window (s) | Commits a second | Aim: at most 1 a second |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
  writeBenchSection('idle', section);
} finally {
  await admin.end();
}
