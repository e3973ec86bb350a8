// npm run bench:limits — tools' rate limits (docs/limits.md) through real `mt serve` processes on PostgreSQL:
// 1. the cost of a call of a limited tool far from its limit against the same tool without a limit, in the same run
//    (`POST /v1/extops/{name}/call` against a local upstream; alternating rounds; aim ≤ 1.05×);
// 2. the limit's accuracy across three `mt serve` on one database: N calls per window, hammered through all three,
//    counted where the upstream receives them (the most in any window, and in each window from the first call).
// Writes its section of docs/performance.md (bench/lib/perf-doc.js). Needs a build (`npm run build`) and PostgreSQL at
// 127.0.0.1:5432 (MT_TEST_PG_URL); sends traffic only to 127.0.0.1.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Pool } from 'undici';
import { addedOver, combine, measure } from './lib/measure.js';
import { provenance, writeBenchSection } from './lib/perf-doc.js';
import { serveEnv, serve, stop } from './lib/serve.js';

const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 400);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 2000);
const CONCURRENCIES = (process.env.BENCH_CONCURRENCY ?? '1,16').split(',').map(Number);
// The far limit: a million calls a minute, which the bench never comes near.
const FAR = '{ calls = 1000000 per = "1m" }';
// The accuracy test: N calls per window through three servers for ACCURACY_MS.
const N = Number(process.env.BENCH_LIMIT_N ?? 50);
const PER_S = Number(process.env.BENCH_LIMIT_PER_S ?? 2);
const ACCURACY_MS = Number(process.env.BENCH_ACCURACY_MS ?? 12_000);
const ACCURACY_CONCURRENCY = Number(process.env.BENCH_ACCURACY_CONCURRENCY ?? 4);
const SMALL_N = 10;
const BODY = JSON.stringify({ arguments: { additionalInputs: { 'path.orderId': 'A-1001' } } });
const REPLY = JSON.stringify({ id: 'A-1001', status: 'shipped' });
const PG_URL = process.env.MT_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const root = fileURLToPath(new URL('..', import.meta.url));

if (process.argv[2] === '--upstream') {
  // The upstream, in its own process: answers every request and keeps the arrival time (ms, monotonic) of each.
  const arrivals = [];
  const server = createServer((req, res) => {
    if (req.url === '/arrivals') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(arrivals.splice(0)));
      return;
    }
    if (req.url.startsWith('/burst/')) arrivals.push(performance.now());
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(REPLY) });
      res.end(REPLY);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }));
  process.on('disconnect', () => process.exit(0));
} else {
  await main();
}

function tool(name, path, limit) {
  return [
    {
      path: `connectors/open-api/${name}-get.mtr`,
      content: `method = "GET"\nurl = "${path}/{orderId}"\ndescription = "One order"\nauth = "None"\nparameters.path = [ { name = "orderId" description = "The order id" type = "string" } ]\n`,
    },
    {
      path: `external-operations/open-api/${name}.mtr`,
      content: `connector = @ref("${name}-get")\nguidance = "Looks up an order."\n${limit === undefined ? '' : `limit = ${limit}\n`}`,
    },
  ];
}

async function deploy(url, adminKey, files) {
  const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
  const deployed = await fetch(`${url}/v1/deploy`, { method: 'POST', headers, body: JSON.stringify({ files }) });
  if (deployed.status !== 200) throw new Error(`deploy: ${deployed.status} ${await deployed.text()}`);
}

/** A REST call of tool `name` on `pool`; resolves with the HTTP status (200 or 429; anything else throws). */
async function callTool(pool, adminKey, name) {
  const { statusCode, body } = await pool.request({
    path: `/v1/extops/${name}/call`,
    method: 'POST',
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: BODY,
  });
  const value = await body.json();
  if (statusCode === 200 && value.ok) return 200;
  if (statusCode === 429 && value.code === 'api:limits:exceeded') return 429;
  throw new Error(`${name}: ${statusCode} ${JSON.stringify(value)}`);
}

async function main() {
  if (!existsSync(join(root, 'packages/cli/dist/index.js'))) throw new Error('build first: npm run build');
  const began = performance.now();
  const upstream = await new Promise((resolve) => {
    const proc = fork(fileURLToPath(import.meta.url), ['--upstream'], { stdio: 'inherit' });
    proc.once('message', (m) => resolve({ proc, port: m.port }));
  });
  const base = `http://127.0.0.1:${upstream.port}`;
  const dbName = `mt_bench_limits_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${dbName}"`);
  const dbUrl = new URL(PG_URL);
  dbUrl.pathname = `/${dbName}`;
  const adminKey = `mt_${randomBytes(24).toString('base64url')}`;
  const env = { ...serveEnv(adminKey), DATABASE_URL: dbUrl.toString() };
  const servers = [];
  const pools = [];
  try {
    // Three servers on one database, started one after the other (the first migrates).
    for (let i = 0; i < 3; i++) servers.push(await serve(env, []));
    await deploy(servers[0].url, adminKey, [
      ...tool('get-order', `${base}/orders`),
      ...tool('get-order-too', `${base}/orders`),
      ...tool('get-order-limited', `${base}/orders`, FAR),
      ...tool('get-burst', `${base}/burst`, `{ calls = ${N} per = "${PER_S}s" onLimit = "fail" }`),
      // The control of the accuracy: a limit too small to lease (every call asks the database, decision 0320).
      ...tool('get-burst-small', `${base}/burst`, `{ calls = ${SMALL_N} per = "${PER_S}s" onLimit = "fail" }`),
    ]);
    for (const server of servers) pools.push(new Pool(server.url));

    // 1. Cost far from the limit: one server, the two tools in alternating rounds.
    const targets = [
      { name: 'no limit', call: () => callTool(pools[0], adminKey, 'get-order') },
      { name: `limit ${FAR}`, call: () => callTool(pools[0], adminKey, 'get-order-limited') },
      // The control: a second tool without a limit, the same as the first (how far two equal rows differ here).
      { name: 'no limit, control', call: () => callTool(pools[0], adminKey, 'get-order-too') },
    ];
    const cost = [];
    for (const concurrency of CONCURRENCIES) {
      for (const target of targets) await measure(target.call, concurrency, 1e9, WARMUP_MS);
      const rounds = targets.map(() => []);
      for (let round = 0; round < ROUNDS; round++) {
        for (let k = 0; k < targets.length; k++) {
          const i = (round + k) % targets.length;
          rounds[i].push(await measure(targets[i].call, concurrency, 1e9, ROUND_MS));
        }
      }
      const [plain, limited, control] = rounds.map(combine);
      // The same-round estimate (bench/lib/measure.js): each round's p50 less the no-limit round's next to it, so a
      // load that drifts between rounds falls on both sides; the ratio is the no-limit p50 plus that, over it.
      const added = addedOver(rounds[1], rounds[0]);
      const controlAdded = addedOver(rounds[2], rounds[0]);
      cost.push({ concurrency, plain, limited, control, added, controlAdded });
      console.error(
        `c=${concurrency}: same-round ratio ${(1 + added.median / plain.p50).toFixed(3)} (control ${(1 + controlAdded.median / plain.p50).toFixed(3)}); no limit ${plain.perSecond.toFixed(0)}/s p50 ${plain.p50.toFixed(0)}µs; limited ${limited.perSecond.toFixed(0)}/s p50 ${limited.p50.toFixed(0)}µs; control ${control.perSecond.toFixed(0)}/s p50 ${control.p50.toFixed(0)}µs; ratio p50 ${(limited.p50 / plain.p50).toFixed(3)} (control ${(control.p50 / plain.p50).toFixed(3)})`,
      );
    }

    // 2. Accuracy: every server hammered at once for ACCURACY_MS; the upstream's arrival times counted. Then the same
    // with the small limit, which never leases: the slack both show is the send time, not the allowance.
    const accuracyOf = async (name, n) => {
      await fetch(`${base}/arrivals`).then((r) => r.json());
      const statuses = { 200: 0, 429: 0 };
      const hammer = (pool) => async () => {
        statuses[await callTool(pool, adminKey, name)]++;
      };
      await Promise.all(pools.map((pool) => measure(hammer(pool), ACCURACY_CONCURRENCY, 1e9, ACCURACY_MS)));
      const arrivals = await fetch(`${base}/arrivals`).then((r) => r.json());
      const result = { ...windows(arrivals, PER_S * 1000, n), statuses, arrivals: arrivals.length };
      console.error(
        `accuracy ${name}: ${arrivals.length} arrivals, ${statuses[200]} admitted, ${statuses[429]} refused; most in any ${PER_S} s window ${result.most}; ${n + 1} arrivals spanned at least ${result.closest.toFixed(1)} ms; per window from the first ${result.fixed.join(', ')}`,
      );
      return result;
    };
    const accuracy = await accuracyOf('get-burst', N);
    const small = await accuracyOf('get-burst-small', SMALL_N);
    for (const pool of pools) await pool.close();
    // The round trips the far tool's calls made: its rows (one a call, plus the permits leased and not given back).
    const benchDb = new pg.Client({ connectionString: dbUrl.toString() });
    await benchDb.connect();
    const limitRows = await benchDb.query(
      `SELECT coalesce(sum(permits), 0)::int AS n, count(DISTINCT split_part(id, ':', 1))::int AS leases FROM mt_limit_slots
        WHERE limit_key = 'tool:get-order-limited'`,
    );
    await benchDb.end();
    writeSection(cost, accuracy, small, (performance.now() - began) / 1000, limitRows.rows[0]);
  } finally {
    for (const server of servers) await stop(server.proc);
    upstream.proc.disconnect();
    await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    await admin.end();
  }
}

/**
 * The most arrivals in any window of `perMs` (a sliding window: from each arrival on), and the count in each
 * consecutive window from the first arrival (the last, partial one left out).
 */
function windows(arrivals, perMs, N) {
  const sorted = [...arrivals].sort((a, b) => a - b);
  let most = 0;
  let closest = Number.POSITIVE_INFINITY;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (j < sorted.length && sorted[j] - sorted[i] < perMs) j++;
    most = Math.max(most, j - i);
    // How much shorter than the window the span of N + 1 arrivals was (when it was): the slack at the upstream.
    if (i + N < sorted.length) closest = Math.min(closest, sorted[i + N] - sorted[i]);
  }
  const fixed = [];
  if (sorted.length > 0) {
    const first = sorted[0];
    const end = sorted[sorted.length - 1];
    for (let from = first; from + perMs <= end; from += perMs) {
      fixed.push(sorted.filter((t) => t >= from && t < from + perMs).length);
    }
  }
  return { most, fixed, closest };
}

function writeSection(cost, accuracy, small, seconds, rows) {
  const f = (n) => n.toFixed(0);
  const ratio = (plain, added) => (1 + added.median / plain.p50).toFixed(3);
  const table = cost
    .map(
      ({ concurrency, plain, limited, added, controlAdded }) =>
        `| ${concurrency} | ${f(plain.perSecond)}, ${f(plain.p50)} / ${f(plain.p99)} | ${f(limited.perSecond)}, ${f(limited.p50)} / ${f(limited.p99)} | ${ratio(plain, added)} × (quartiles ${ratio(plain, { median: added.low })}–${ratio(plain, { median: added.high })}; control ${ratio(plain, controlAdded)} ×); pooled p50 ${(limited.p50 / plain.p50).toFixed(3)} × |`,
    )
    .join('\n');
  const span = (a) => (Number.isFinite(a.closest) ? `${a.closest.toFixed(0)} ms` : '-');
  const worst = Math.max(...cost.map(({ plain, added }) => 1 + added.median / plain.p50));
  const noise = Math.max(...cost.map(({ plain, controlAdded }) => 1 + Math.abs(controlAdded.median) / plain.p50));
  const section = `## Rate limits: cost far from the limit, accuracy across servers (\`npm run bench:limits\`)
${provenance('npm run build && npm run bench:limits')}
Three \`mt serve\` on one PostgreSQL database, REST \`POST /v1/extops/{name}/call\` to a local upstream. Cost: a tool with no limit
and one far from \`limit = ${FAR}\`, on one server, ${ROUNDS} alternating rounds of ${ROUND_MS} ms; the run took ${f(seconds)} s.

| Concurrency | No limit: calls/s, p50 / p99 µs | Far from its limit: calls/s, p50 / p99 µs | Limited ÷ no limit: p50, same rounds |
| ----------- | ------------------------------- | ----------------------------------------- | ------------------------------------ |
${table}

- Aim ≤ 1.05× at p50: worst ${worst.toFixed(3)} × (${worst <= 1.05 ? 'met' : 'not met'}; a second tool with no limit differed by ${noise.toFixed(3)} ×; ratio: each round's p50 less the no-limit round's beside it, \`addedOver\`). The far
  tool asked the database ${rows.leases} times for ${rows.n} calls (the local allowance, decision 0375).
- Accuracy, \`calls = ${N} per = "${PER_S}s"\` through the three servers at once (${ACCURACY_CONCURRENCY} callers each, ${f(ACCURACY_MS / 1000)} s): ${accuracy.statuses[200]} admitted, ${accuracy.statuses[429]} refused; at the
  upstream most in any ${PER_S} s window ${accuracy.most}, ${N + 1} arrivals spanned ≥ ${span(accuracy)} (slack: the send time, docs/limits.md), per window ${accuracy.fixed.join(', ')}.
  A limit of ${SMALL_N} (never leased; the control): most ${small.most}, ${SMALL_N + 1} spanned ≥ ${span(small)}, per window ${small.fixed.join(', ')}.`;
  writeBenchSection('limits', section);
}
