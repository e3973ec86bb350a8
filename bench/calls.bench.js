// npm run bench:calls — one tool call end to end through a real `mt serve` process (on PostgreSQL and on PGlite),
// against raw undici to the same upstream and a minimal fastify proxy to it, in the same run.
// Writes calls/s, p50, p99 and the aims' ratios into docs/performance.md between its markers (bench/lib/perf-doc.js).
// Needs a build (`npm run build`) and PostgreSQL at 127.0.0.1:5432 (MT_TEST_PG_URL); sends traffic only to 127.0.0.1.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import { Pool } from 'undici';
import { addedOver, combine, measure, runQueueWaitMicros } from './lib/measure.js';
import { writeBenchSection, provenance } from './lib/perf-doc.js';
import { poolFetch } from './lib/pool-fetch.js';
import { listenBareProxy, listenProxy } from './lib/proxy.js';
import { cpuMicros, deployGetOrder, serveEnv, serve as startServe, stop } from './lib/serve.js';

const MAX_CALLS = Number(process.env.BENCH_CALLS ?? 20_000);
const MAX_MS = Number(process.env.BENCH_MS ?? 2_000);
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 800);
// A target's warm-up also lasts until it has made BENCH_WARMUP_CALLS calls (default 3,000), up to BENCH_WARMUP_MAX_MS
// (default 10 s): on a busy machine 800 ms held a few hundred calls of a server, and the 2 s after it were its slowest
// (docs/performance.md at 3251c0c, "bench:calls at concurrency 1: why the figure swings").
const WARMUP_CALLS = Number(process.env.BENCH_WARMUP_CALLS ?? 3000);
const WARMUP_MAX_MS = Number(process.env.BENCH_WARMUP_MAX_MS ?? 10_000);
// BENCH_ROUNDS: alternating rounds (of BENCH_MS / rounds each), so a load that changes during the run weighs on every
// target alike. At concurrency 1 the default is 10 rounds of 200 ms: the "added" figure is the median over rounds of
// (the row's p50 − raw undici's p50 in the same round), each round weighted by the row's calls in it
// (bench/lib/measure.js `addedOver`; docs/decisions/0041-bench-calls-at-concurrency-1-ten-rounds.md). At higher
// concurrencies 2 rounds of 1 s.
const roundsAt = (concurrency) => Number(process.env.BENCH_ROUNDS ?? (concurrency === 1 ? 10 : 2));
// Profiling and quick looks: BENCH_ONLY keeps the targets whose name contains it, or one of its `|`-separated parts
// (the docs are then not written),
// BENCH_CONCURRENCY picks the concurrencies (`1,64`), BENCH_SERVE_NODE_ARGS gives `mt serve`'s node flags
// (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`; summarise with `node bench/lib/cpu-profile.js DIR`).
const ONLY = process.env.BENCH_ONLY;
// A part starting with `=` keeps only the target of exactly that name (`raw|fastify|=mt serve, PostgreSQL`).
const kept = (name) =>
  ONLY === undefined ||
  ONLY.split('|').some((part) => (part.startsWith('=') ? name === part.slice(1) : name.includes(part)));
const CONCURRENCIES = (process.env.BENCH_CONCURRENCY ?? '1,64').split(',').map(Number);
const SERVE_NODE_ARGS = (process.env.BENCH_SERVE_NODE_ARGS ?? '').split(' ').filter(Boolean);
const REPLY = JSON.stringify({ id: 'A-1001', status: 'shipped', total: 12.5, items: [{ sku: 'MUG-1', qty: 1 }] });
const SECRET = 'bench-secret-value';
const PG_URL = process.env.MT_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const root = fileURLToPath(new URL('..', import.meta.url));
const OTEL_ROW = 'mt serve, PostgreSQL, OpenTelemetry on';

if (process.argv[2] === '--upstream') {
  // The upstream runs in its own process so its CPU time is not charged to any client.
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.headers['x-api-key'] !== SECRET) res.writeHead(401).end();
      else {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(REPLY) });
        res.end(REPLY);
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }));
  process.on('disconnect', () => process.exit(0));
} else if (process.argv[2] === '--proxy') {
  // The baseline server: the minimal fastify proxy (bench/lib/proxy.js) on the repo's undici.
  const port = await listenProxy({ Pool, upstreamPort: process.argv[3], secret: SECRET });
  process.send?.({ port });
} else if (process.argv[2] === '--bare-proxy') {
  // The floor: the same proxy on node:http alone (bench/calls-spread.js's `bare` row).
  const port = await listenBareProxy({ Pool, upstreamPort: process.argv[3], secret: SECRET });
  process.send?.({ port });
} else {
  await main();
}

function child(args) {
  const proc = fork(fileURLToPath(import.meta.url), args, { stdio: 'inherit' });
  return new Promise((resolve) => proc.once('message', (m) => resolve({ proc, port: m.port })));
}

/** Calls `call` for WARMUP_MS, and on until WARMUP_CALLS calls in all or WARMUP_MAX_MS; nothing is kept. */
async function warmUp(call, concurrency) {
  const began = performance.now();
  let calls = (await measure(call, concurrency, MAX_CALLS, WARMUP_MS)).latencies.length;
  while (calls < WARMUP_CALLS && performance.now() - began < WARMUP_MAX_MS) {
    const left = WARMUP_MAX_MS - (performance.now() - began);
    calls += (await measure(call, concurrency, WARMUP_CALLS - calls, left)).latencies.length;
  }
}

/** Starts `mt serve` (bench/lib/serve.js) with BENCH_SERVE_NODE_ARGS. */
function serve(env, args) {
  return startServe(env, args, SERVE_NODE_ARGS);
}

/**
 * The same tool over MCP: `tools/call` of the SDK's Client on one Streamable HTTP session of `server` (docs/mcp.md);
 * its HTTP client is an undici `Pool` as REST's (poolFetch), or with `onFetch` the SDK's default, global `fetch`.
 */
async function mcpTarget(server, adminKey, onFetch = false) {
  const client = new Client({ name: 'bench', version: '1' });
  const http = onFetch ? undefined : poolFetch(server.url);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${adminKey}` } },
      ...(http === undefined ? {} : { fetch: http.fetch }),
    }),
  );
  const params = { name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'A-1001' } } };
  return {
    name: `${server.name}, over MCP${onFetch ? ' (client on fetch)' : ''}`,
    pid: server.proc.pid,
    pool: {
      close: async () => {
        await client.close();
        await http?.close();
      },
    },
    call: async () => {
      const result = await client.callTool(params);
      if (result.isError) throw new Error(`MCP call failed: ${JSON.stringify(result.content)}`);
    },
  };
}

async function main() {
  if (!existsSync(join(root, 'packages/cli/dist/index.js'))) throw new Error('build first: npm run build');
  const began = performance.now();
  const upstream = await child(['--upstream']);
  const proxy = await child(['--proxy', String(upstream.port)]);
  // OpenTelemetry on (issue #24): a local OTLP/HTTP receiver in its own process, for a second PostgreSQL server.
  const otlp = await new Promise((resolve) => {
    const proc = fork(join(root, 'bench/lib/otlp-receiver.js'), [], { stdio: 'inherit' });
    proc.once('message', (m) => resolve({ proc, url: `http://127.0.0.1:${m.port}` }));
  });
  const dbName = `mt_bench_calls_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const otelDbName = `${dbName}_otel`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${dbName}"`);
  const dbUrl = new URL(PG_URL);
  dbUrl.pathname = `/${dbName}`;
  const otelDbUrl = new URL(PG_URL);
  otelDbUrl.pathname = `/${otelDbName}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'mt-bench-calls-'));
  const adminKey = `mt_${randomBytes(24).toString('base64url')}`;
  const env = serveEnv(adminKey);
  const servers = [];
  try {
    servers.push({ name: 'mt serve, PostgreSQL', ...(await serve({ ...env, DATABASE_URL: dbUrl.toString() }, [])) });
    // The same server with OpenTelemetry on, exporting to the local receiver (its own database: the same set-up).
    if (kept(OTEL_ROW)) {
      await admin.query(`CREATE DATABASE "${otelDbName}"`);
      const otelEnv = {
        ...env,
        DATABASE_URL: otelDbUrl.toString(),
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      };
      servers.push({ name: OTEL_ROW, ...(await serve(otelEnv, [])) });
    }
    // With BENCH_ONLY, the PGlite server only when a kept target is its own (its start-up would weigh on the others).
    if (kept('mt serve, PGlite')) {
      servers.push({ name: 'mt serve, PGlite', ...(await serve(env, ['--data', dataDir])) });
    }
    for (const server of servers) await deployGetOrder(server.url, adminKey, upstream.port, SECRET);

    const callBody = JSON.stringify({ arguments: { additionalInputs: { 'path.orderId': 'A-1001' } } });
    const raw = new Pool(`http://127.0.0.1:${upstream.port}`);
    const proxyPool = new Pool(`http://127.0.0.1:${proxy.port}`);
    const mcp = await mcpTarget(servers[0], adminKey);
    const mcpOnFetch = await mcpTarget(servers[0], adminKey, true);
    const targets = [
      {
        name: 'raw undici',
        call: async () => {
          const { statusCode, body } = await raw.request({
            path: '/orders/A-1001',
            method: 'GET',
            headers: { 'user-agent': 'bench', accept: 'application/json', 'x-api-key': SECRET },
          });
          const value = await body.json();
          if (statusCode !== 200 || value.id !== 'A-1001') throw new Error('raw call failed');
        },
      },
      {
        name: 'fastify proxy',
        pid: proxy.proc.pid,
        call: async () => {
          const { statusCode, body } = await proxyPool.request({
            path: '/call',
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: callBody,
          });
          const value = await body.json();
          if (statusCode !== 200 || !value.ok) throw new Error('proxy call failed');
        },
      },
      ...servers.map((server) => {
        const pool = new Pool(server.url);
        const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
        return {
          name: server.name,
          pid: server.proc.pid,
          pool,
          call: async () => {
            const { statusCode, body } = await pool.request({
              path: '/v1/extops/get-order/call',
              method: 'POST',
              headers,
              body: callBody,
            });
            const value = await body.json();
            if (statusCode !== 200 || !value.ok) throw new Error(`server call failed: ${JSON.stringify(value)}`);
          },
        };
      }),
      mcp,
      mcpOnFetch,
    ];

    const allTargets = [...targets];
    if (ONLY !== undefined) targets.splice(0, targets.length, ...targets.filter((t) => kept(t.name)));
    const rows = [];
    for (const concurrency of CONCURRENCIES) {
      for (const target of targets) await warmUp(target.call, concurrency);
      // Alternating rounds, so a change in machine load during the run weighs on every target alike.
      const ROUNDS = roundsAt(concurrency);
      const rounds = targets.map(() => []);
      for (let round = 0; round < ROUNDS; round++) {
        // Each round starts with another target, so none always follows the same one (a busy neighbour's leftovers).
        for (let k = 0; k < targets.length; k++) {
          const i = (round + k) % targets.length;
          const target = targets[i];
          const cpu0 = target.pid === undefined ? undefined : cpuMicros(target.pid);
          // The wait for a core of the bench, the upstream and the serving process (run-queue wait, Linux).
          const waiting = [process.pid, upstream.proc.pid, ...(target.pid === undefined ? [] : [target.pid])];
          const wait0 = waiting.map(runQueueWaitMicros);
          const client0 = process.cpuUsage();
          const result = await measure(target.call, concurrency, MAX_CALLS / ROUNDS, MAX_MS / ROUNDS);
          const client = process.cpuUsage(client0);
          const cpu1 = target.pid === undefined ? undefined : cpuMicros(target.pid);
          const wait1 = waiting.map(runQueueWaitMicros);
          rounds[i].push({
            wait: wait0.some((w, j) => w === undefined || wait1[j] === undefined)
              ? undefined
              : wait1.reduce((sum, w, j) => sum + w - wait0[j], 0),
            ...result,
            cpu: cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0,
            clientCpu: client.user + client.system,
          });
        }
      }
      const rawIndex = targets.findIndex((t) => t.name === 'raw undici');
      const results = targets.map((target, i) => ({
        name: target.name,
        ...combine(rounds[i]),
        ...(rawIndex < 0 ? {} : { added: addedOver(rounds[i], rounds[rawIndex]) }),
      }));
      rows.push({ concurrency, results, rounds: ROUNDS });
      for (const r of results) {
        const added =
          r.added === undefined || concurrency !== 1
            ? ''
            : ` added ${r.added.median.toFixed(0)}µs (quartiles ${r.added.low.toFixed(0)}–${r.added.high.toFixed(0)}, pooled ${r.added.pooled.toFixed(0)})`;
        console.error(
          `c=${concurrency} ${r.name}: ${r.perSecond.toFixed(0)}/s p50 ${r.p50.toFixed(0)}µs p99 ${r.p99.toFixed(0)}µs${added} cpu/call ${r.cpuPerCall?.toFixed(0) ?? '-'}µs client cpu/call ${r.clientCpuPerCall.toFixed(0)}µs run-queue wait/call ${r.waitPerCall?.toFixed(0) ?? '-'}µs`,
        );
      }
    }
    // BENCH_STATEMENTS=1: the transactions a call makes on PostgreSQL (xact_commit of the bench's database; each
    // statement outside a transaction is one), over 500 calls at concurrency 1 of each target on the PostgreSQL server.
    if (process.env.BENCH_STATEMENTS) {
      const commits = async () => {
        // The server's backends report their counts when idle, at most once a second.
        await new Promise((resolve) => setTimeout(resolve, 1500));
        const { rows } = await admin.query('SELECT xact_commit FROM pg_stat_database WHERE datname = $1', [dbName]);
        return Number(rows[0].xact_commit);
      };
      for (const target of targets.filter((t) => t.pid === servers[0].proc.pid)) {
        const before = await commits();
        await measure(target.call, 1, 500, 60_000);
        console.error(`${target.name}: ${((await commits()) - before) / 500} transactions a call`);
      }
    }
    await raw.close();
    await proxyPool.close();
    for (const target of allTargets) await target.pool?.close();
    const logBytes = servers.map((s) => s.proc.logBytes);
    const exported = await (await fetch(`${otlp.url}/counts`)).json();
    console.error(`OTLP receiver: ${exported.requests} requests, ${exported.bytes} bytes`);
    if (ONLY === undefined && CONCURRENCIES.join() === '1,64')
      writeSection(rows, logBytes, (performance.now() - began) / 1000, exported);
    else
      console.error(
        `server log bytes: ${logBytes.join(', ')}; docs/performance.md not written (BENCH_ONLY or BENCH_CONCURRENCY)`,
      );
  } finally {
    for (const server of servers) await stop(server.proc);
    upstream.proc.disconnect();
    proxy.proc.disconnect();
    await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    await admin.query(`DROP DATABASE IF EXISTS "${otelDbName}" WITH (FORCE)`);
    otlp.proc.disconnect();
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function writeSection(rows, logBytes, seconds, exported) {
  const f = (n) => n.toFixed(0);
  const get = (concurrency, name) =>
    rows.find((r) => r.concurrency === concurrency).results.find((r) => r.name === name);
  const table = rows
    .flatMap(({ concurrency, results }) =>
      results.map(
        (r) =>
          `| ${concurrency} | ${r.name} | ${f(r.perSecond)} | ${f(r.p50)} / ${f(r.p99)} | ${r.cpuPerCall === undefined ? '' : f(r.cpuPerCall)} | ${f(r.clientCpuPerCall)} | ${r.calls} |`,
      ),
    )
    .join('\n');
  const pg64 = get(64, 'mt serve, PostgreSQL').perSecond / get(64, 'fastify proxy').perSecond;
  const lite64 = get(64, 'mt serve, PGlite').perSecond / get(64, 'fastify proxy').perSecond;
  // Added at concurrency 1: the call-weighted median over rounds of each round's p50 less raw undici's (addedOver).
  const pgAdded = get(1, 'mt serve, PostgreSQL').added.median;
  const liteAdded = get(1, 'mt serve, PGlite').added.median;
  const proxyAdded = get(1, 'fastify proxy').added.median;
  const quartiles = (name) => `${f(get(1, name).added.low)}–${f(get(1, name).added.high)}`;
  const rounds = (concurrency) => rows.find((r) => r.concurrency === concurrency).rounds;
  const waits = (c) =>
    ['raw undici', 'fastify proxy', 'mt serve, PostgreSQL']
      .map((name) => (get(c, name).waitPerCall === undefined ? '-' : f(get(c, name).waitPerCall)))
      .join(', ');
  const mcp64 = get(64, 'mt serve, PostgreSQL, over MCP').perSecond / get(64, 'fastify proxy').perSecond;
  const mcp1 = get(1, 'mt serve, PostgreSQL, over MCP').p50 / get(1, 'mt serve, PostgreSQL').p50;
  // OpenTelemetry on against the plain PostgreSQL server, same run (issue #24: under 1 ms added at p50).
  const otelAdded = (c) => get(c, OTEL_ROW).p50 - get(c, 'mt serve, PostgreSQL').p50;
  const otelCpu = (c) =>
    (get(c, OTEL_ROW).cpuPerCall ?? Number.NaN) - (get(c, 'mt serve, PostgreSQL').cpuPerCall ?? Number.NaN);
  const fetch64 =
    get(64, 'mt serve, PostgreSQL, over MCP (client on fetch)').perSecond / get(64, 'fastify proxy').perSecond;
  const fetch1 = get(1, 'mt serve, PostgreSQL, over MCP (client on fetch)').p50 / get(1, 'mt serve, PostgreSQL').p50;
  const section = `## One tool call end to end (\`npm run bench:calls\`)

${provenance('npm run build && npm run bench:calls')}

\`POST /v1/extops/get-order/call\` (a deployed tool with a Header secret) on real \`mt serve\` processes (PostgreSQL on
127.0.0.1, PGlite in a temp folder; \`MT_LOG_LEVEL=info\`) against one local upstream (a ${Buffer.byteLength(REPLY)}-byte JSON
reply). In the same run: raw undici to the upstream and a minimal fastify proxy (one undici request with the secret
header). \`over MCP\` is the same tool through the MCP SDK's \`Client\` (on an undici \`Pool\`; \`client on fetch\`: on the
global \`fetch\`). A warm-up per target, then alternating rounds (${rounds(1)} at concurrency 1, ${rounds(64)} at 64);
latencies in µs; CPU a call of the serving process and of the bench's client. The run took ${f(seconds)} s.

| Concurrency | Target | Calls/s | p50 / p99 | CPU µs per call (serving process) | CPU µs per call (bench's client) | Calls measured |
| ----------- | ------ | ------- | --------- | --------------------------------- | -------------------------------- | -------------- |
${table}

Aims, as ratios of this run:

- Concurrency 64, \`mt serve\` on PostgreSQL ≥ 50% of the fastify proxy's calls/s: ${(pg64 * 100).toFixed(0)}% (${pg64 >= 0.5 ? 'met' : 'not met'}); PGlite ${(lite64 * 100).toFixed(0)}%.
- Concurrency 1, ≤ 250 µs added at p50 over raw undici (median over rounds of each round's difference, weighted by
  calls: docs/decisions/0041-bench-calls-at-concurrency-1-ten-rounds.md): ${f(pgAdded)} µs on PostgreSQL
  (${pgAdded <= 250 ? 'met' : 'not met'}; quartiles ${quartiles('mt serve, PostgreSQL')}), ${f(liteAdded)} µs on PGlite; the proxy alone ${f(proxyAdded)} µs
  (${quartiles('fastify proxy')}). Wait for a core a call (raw undici, proxy, \`mt serve\`): ${waits(1)} µs; more than a few µs
  means a busy machine.
- Over MCP (#29): concurrency 64 ≥ 50% of the proxy: ${(mcp64 * 100).toFixed(0)}% (${mcp64 >= 0.5 ? 'met' : 'not met'}); concurrency 1 p50 ≤ 1.3 × REST's:
  ${mcp1.toFixed(2)} × (${mcp1 <= 1.3 ? 'met' : 'not met'}). Client on \`fetch\`: ${(fetch64 * 100).toFixed(0)}% and ${fetch1.toFixed(2)} ×.
- OpenTelemetry on (#24) adds under 1 ms at p50: ${f(otelAdded(1))} µs at concurrency 1 (${otelAdded(1) < 1000 ? 'met' : 'not met'}), ${f(otelAdded(64))} µs at 64;
  CPU a call ${f(otelCpu(1))} / ${f(otelCpu(64))} µs more. The receiver got ${exported.requests} exports (${Math.round(exported.bytes / 1024)} KiB).

The servers wrote ${logBytes.join(' and ')} bytes of log during the run.`;
  writeBenchSection('calls', section);
}
