// node bench/calls-spread.js — why bench:calls' concurrency-1 figure swings between runs: raw undici, the fastify proxy,
// the same proxy on node:http alone (`bare`: the floor of one more process on the path) and `mt serve` on PostgreSQL (bench:calls' upstream and tool), in many short alternating rounds, each round's p50
// printed with the core (/proc/PID/stat `processor`) each process's main thread and the bench's own last ran on,
// sampled every 20 ms during the round. BENCH_ROUNDS (default 30) rounds of BENCH_ROUND_MS (default 200) ms a target.
// BENCH_PIN (below) pins the processes with taskset, to see what placement does. Needs a build and PostgreSQL.
import { execFileSync, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Pool } from 'undici';
import { addedOver, measure, median, schedStat } from './lib/measure.js';
import { deployGetOrder, serve, serveEnv, stop } from './lib/serve.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 200);
const SECRET = 'bench-secret-value';
const PG_URL = process.env.MT_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const bench = fileURLToPath(new URL('calls.bench.js', import.meta.url));

const psr = (pid) => {
  try {
    return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[36]);
  } catch {
    return -1;
  }
};
// A process's threads' time on a core and waiting for one (ns), the times they were put on a core (`slices`: a
// wake-up each, mostly), and its main thread's migrations between cores.
const sched = (pid) => {
  const stat = schedStat(pid);
  try {
    const migrations = Number(/se\.nr_migrations\s+:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/sched`, 'utf8'))[1]);
    return stat === undefined ? { run: 0, wait: 0, slices: 0, migrations: 0 } : { ...stat, migrations };
  } catch {
    return { run: 0, wait: 0, slices: 0, migrations: 0 };
  }
};
const child = (args) =>
  new Promise((resolve) => {
    const proc = fork(bench, args, { stdio: 'inherit' });
    proc.once('message', (m) => resolve({ proc, port: m.port }));
  });

const upstream = await child(['--upstream']);
const proxy = await child(['--proxy', String(upstream.port)]);
const bare = await child(['--bare-proxy', String(upstream.port)]);
const admin = new pg.Client({ connectionString: PG_URL });
await admin.connect();
const dbName = `mt_bench_spread_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
await admin.query(`CREATE DATABASE "${dbName}"`);
const url = new URL(PG_URL);
url.pathname = `/${dbName}`;
const adminKey = `mt_${randomBytes(24).toString('base64url')}`;
const server = await serve({ ...serveEnv(adminKey), DATABASE_URL: url.toString() });
try {
  await deployGetOrder(server.url, adminKey, upstream.port, SECRET);
  // BENCH_PIN=same: every process of the chain on core 0; BENCH_PIN=split: the bench and the upstream on core 0, the
  // proxy and `mt serve` on core 1 (every hop of theirs crosses cores). Unset: the OS places them, as bench:calls does.
  const pin = process.env.BENCH_PIN;
  if (pin === 'same' || pin === 'split') {
    const serverCore = pin === 'same' ? '0' : '1';
    for (const [pid, core] of [
      [process.pid, '0'],
      [upstream.proc.pid, '0'],
      [proxy.proc.pid, serverCore],
      [bare.proc.pid, serverCore],
      [server.proc.pid, serverCore],
    ]) {
      execFileSync('taskset', ['-a', '-p', '-c', core, String(pid)], { stdio: 'ignore' });
    }
  }
  const callBody = JSON.stringify({ arguments: { additionalInputs: { 'path.orderId': 'A-1001' } } });
  const raw = new Pool(`http://127.0.0.1:${upstream.port}`);
  const proxyPool = new Pool(`http://127.0.0.1:${proxy.port}`);
  const barePool = new Pool(`http://127.0.0.1:${bare.port}`);
  const mtPool = new Pool(server.url);
  const ok = async (pool, opts) => {
    const { statusCode, body } = await pool.request(opts);
    await body.dump();
    if (statusCode !== 200) throw new Error(`${opts.path}: ${statusCode}`);
  };
  const targets = [
    {
      name: 'raw',
      call: () =>
        ok(raw, {
          path: '/orders/A-1001',
          method: 'GET',
          headers: { 'user-agent': 'bench', accept: 'application/json', 'x-api-key': SECRET },
        }),
    },
    {
      name: 'proxy',
      pid: proxy.proc.pid,
      call: () =>
        ok(proxyPool, {
          path: '/call',
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: callBody,
        }),
    },
    {
      name: 'bare',
      pid: bare.proc.pid,
      call: () =>
        ok(barePool, {
          path: '/call',
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: callBody,
        }),
    },
    {
      name: 'mt',
      pid: server.proc.pid,
      call: () =>
        ok(mtPool, {
          path: '/v1/extops/get-order/call',
          method: 'POST',
          headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
          body: callBody,
        }),
    },
  ];
  // BENCH_WARMUP_MS (default 800, as bench:calls): each target alone first.
  for (const t of targets) await measure(t.call, 1, 1e9, Number(process.env.BENCH_WARMUP_MS ?? 800));
  const pids = {
    bench: process.pid,
    up: upstream.proc.pid,
    proxy: proxy.proc.pid,
    bare: bare.proc.pid,
    mt: server.proc.pid,
  };
  console.log(`load ${loadavg()[0].toFixed(2)}`);
  const added = { proxy: [], bare: [], mt: [] };
  // Every round's latencies, per target: the estimators compared below over blocks of BENCH_BLOCK rounds.
  const kept = { raw: [], proxy: [], bare: [], mt: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const line = [];
    let rawP50;
    for (const t of targets) {
      const seen = {};
      const sampler = setInterval(() => {
        for (const [k, pid] of Object.entries(pids)) seen[k] = (seen[k] ?? '') + psr(pid);
      }, 20);
      const s0 = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, sched(pid)]));
      const { latencies } = await measure(t.call, 1, 1e9, ROUND_MS);
      const s1 = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, sched(pid)]));
      clearInterval(sampler);
      const n = latencies.length;
      const per = (k, f) =>
        ((s1[k][f] - s0[k][f]) / n / (f === 'migrations' || f === 'slices' ? 1 : 1000)).toFixed(
          f === 'migrations' || f === 'slices' ? 2 : 0,
        );
      const own = t.pid === undefined ? 'up' : t.name;
      const p50 = median(latencies);
      kept[t.name].push(latencies);
      if (t.name === 'raw') rawP50 = p50;
      else added[t.name].push(p50 - rawP50);
      // Per call: the serving process's CPU and run-queue wait (µs), the bench's and the upstream's wait, migrations;
      // then the cores sampled (bench, upstream, server).
      line.push(
        `${t.name} ${p50.toFixed(0).padStart(4)} run ${per(own, 'run')} wait ${per(own, 'wait')}/b${per('bench', 'wait')}/u${per('up', 'wait')} slices ${per(own, 'slices')}/b${per('bench', 'slices')}/u${per('up', 'slices')} mig ${per(own, 'migrations')}/b${per('bench', 'migrations')} ${seen.bench?.slice(0, 5)}/${seen.up?.slice(0, 5)}/${seen[own]?.slice(0, 5)}`,
      );
    }
    console.log(line.join(' | '));
  }
  const pooled = (rounds) => median(rounds.flat());
  console.log(
    `median over rounds of (p50 - raw p50): proxy ${median(added.proxy).toFixed(0)} bare ${median(added.bare).toFixed(0)} mt ${median(added.mt).toFixed(0)}; load ${loadavg()[0].toFixed(2)}`,
  );
  // The same data cut into blocks of BENCH_BLOCK (default 10) rounds, each block as one bench:calls run would see it:
  // `pooled` is the p50 over every call of the block less raw undici's (the old figure), `median` the median over the
  // block's rounds of each round's difference (the new one). Their spread between blocks is each estimator's noise.
  const BLOCK = Number(process.env.BENCH_BLOCK ?? 10);
  const spread = (xs) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
  for (const name of ['proxy', 'bare', 'mt']) {
    const old = [];
    const now = [];
    const weighted = [];
    for (let b = 0; b + BLOCK <= ROUNDS; b += BLOCK) {
      old.push(pooled(kept[name].slice(b, b + BLOCK)) - pooled(kept.raw.slice(b, b + BLOCK)));
      now.push(median(added[name].slice(b, b + BLOCK)));
      // bench:calls' figure: the median of the rounds' differences weighted by the row's calls in each round.
      weighted.push(
        addedOver(
          kept[name].slice(b, b + BLOCK).map((latencies) => ({ latencies })),
          kept.raw.slice(b, b + BLOCK).map((latencies) => ({ latencies })),
        ).median,
      );
    }
    console.log(
      `${name} blocks of ${BLOCK}: pooled ${old.map((x) => x.toFixed(0)).join(' ')} (${spread(old)}); median ${now.map((x) => x.toFixed(0)).join(' ')} (${spread(now)}); weighted ${weighted.map((x) => x.toFixed(0)).join(' ')} (${spread(weighted)})`,
    );
  }
  await raw.close();
  await proxyPool.close();
  await barePool.close();
  await mtPool.close();
} finally {
  await stop(server.proc);
  upstream.proc.disconnect();
  proxy.proc.disconnect();
  bare.proc.disconnect();
  await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  await admin.end();
}
