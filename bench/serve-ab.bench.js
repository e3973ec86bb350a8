// node bench/serve-ab.bench.js OTHER_MT — two `mt serve` side by side in one run: this checkout's ("after") and
// OTHER_MT's (another checkout's packages/cli/bin/mt.js, built: "before"), each on its own PostgreSQL database, on
// bench:calls' upstream and tool. Rounds alternate between the two servers and, within each, between the REST call
// (a bare undici `Pool`) and the MCP row's `tools/call` (the SDK's `Client` on bench/lib/pool-fetch.js), all at
// concurrency 1, so a change of the machine's load weighs on both servers alike. Prints, per server and target, p50,
// the server's CPU µs a call (/proc) and the bench's own (the client's) CPU µs a call. BENCH_CALLS (default 1500) calls
// a round, BENCH_ROUNDS (default 6) rounds. Needs PostgreSQL (MT_TEST_PG_URL). Used for docs/performance.md at 3251c0c.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import { Pool } from 'undici';
import { measure, percentile } from './lib/measure.js';
import { poolFetch } from './lib/pool-fetch.js';
import { cpuMicros, deployGetOrder, restGetOrder, sdkGetOrder, serve, serveEnv, stop } from './lib/serve.js';

const other = process.argv[2];
if (other === undefined) throw new Error('usage: node bench/serve-ab.bench.js OTHER_CHECKOUT/packages/cli/bin/mt.js');
const CALLS = Number(process.env.BENCH_CALLS ?? 1500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const SECRET = 'bench-secret-value';
const PG_URL = process.env.MT_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
// BENCH_MT_AFTER: another "after" (an A/A run with OTHER_MT tells the bench's own bias between the two places).
const here = process.env.BENCH_MT_AFTER ?? fileURLToPath(new URL('../packages/cli/bin/mt.js', import.meta.url));

const upstream = await new Promise((resolve) => {
  const proc = fork(fileURLToPath(new URL('calls.bench.js', import.meta.url)), ['--upstream'], { stdio: 'inherit' });
  proc.once('message', (m) => resolve({ proc, port: m.port }));
});
const admin = new pg.Client({ connectionString: PG_URL });
await admin.connect();
const sides = [];
try {
  // BENCH_AB_SWAP=1 starts "after" first: the two places differ by themselves (an A/A run of one server twice showed
  // 20–66 µs of server CPU a call between them at load 12–15), so runs are made in both orders.
  const checkouts = [
    ['before', other],
    ['after', here],
  ];
  if (process.env.BENCH_AB_SWAP === '1') checkouts.reverse();
  for (const [label, mt] of checkouts) {
    const adminKey = `mt_${randomBytes(24).toString('base64url')}`;
    const dbName = `mt_bench_ab_${label}_${Date.now().toString(36)}`;
    await admin.query(`CREATE DATABASE "${dbName}"`);
    const url = new URL(PG_URL);
    url.pathname = `/${dbName}`;
    const side = { label, dbName };
    sides.push(side);
    side.server = await serve({ ...serveEnv(adminKey), DATABASE_URL: url.toString() }, [], [], mt);
    await deployGetOrder(side.server.url, adminKey, upstream.port, SECRET);
    side.http = poolFetch(side.server.url);
    side.client = new Client({ name: 'bench', version: '1' });
    await side.client.connect(
      new StreamableHTTPClientTransport(new URL(`${side.server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${adminKey}` } },
        fetch: side.http.fetch,
      }),
    );
    side.rest = new Pool(side.server.url);
    const restHeaders = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
    const params = { name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'A-1001' } } };
    const callBody = JSON.stringify({ arguments: params.arguments });
    side.targets = [
      {
        name: 'REST',
        call: () => restGetOrder(side.rest, restHeaders, callBody),
      },
      {
        name: 'MCP',
        call: () => sdkGetOrder(side.client, params),
      },
    ].map((t) => ({ ...t, latencies: [], server: 0, client: 0, calls: 0 }));
    for (const target of side.targets) await measure(target.call, 1, CALLS, 60_000);
  }
  const loads = [loadavg()[0]];
  for (let round = 0; round < ROUNDS; round++) {
    // Each round starts with the other server, so neither always runs first.
    const order = round % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) {
      for (const target of side.targets) {
        const s0 = cpuMicros(side.server.proc.pid);
        const c0 = process.cpuUsage();
        const { latencies } = await measure(target.call, 1, CALLS, 60_000);
        const c = process.cpuUsage(c0);
        target.server += cpuMicros(side.server.proc.pid) - s0;
        target.client += c.user + c.system;
        target.calls += latencies.length;
        target.latencies.push(...latencies);
      }
    }
    loads.push(loadavg()[0]);
  }
  console.log(
    `${ROUNDS} alternating rounds of ${CALLS} calls a target at concurrency 1, load ${loads.map((l) => l.toFixed(1)).join(' → ')}`,
  );
  const rows = {};
  for (const side of sides) {
    for (const t of side.targets) {
      const p50 = percentile(
        t.latencies.sort((a, b) => a - b),
        50,
      );
      rows[`${side.label} ${t.name}`] = { p50, server: t.server / t.calls, client: t.client / t.calls };
      console.log(
        `${side.label.padEnd(6)} ${t.name.padEnd(4)}: p50 ${p50.toFixed(0)} µs, server CPU ${(t.server / t.calls).toFixed(0)} µs a call, client CPU ${(t.client / t.calls).toFixed(0)} µs a call`,
      );
    }
  }
  console.log(`started first: ${sides[0].label}`);
  for (const label of ['before', 'after']) {
    const ratio = rows[`${label} MCP`].p50 / rows[`${label} REST`].p50;
    console.log(`${label.padEnd(6)} MCP p50 / REST p50: ${ratio.toFixed(2)}`);
  }
} finally {
  for (const side of sides) {
    await side.client?.close().catch(() => undefined);
    await side.http?.close();
    await side.rest?.close();
    if (side.server !== undefined) await stop(side.server.proc);
    await admin.query(`DROP DATABASE IF EXISTS "${side.dbName}" WITH (FORCE)`);
  }
  await admin.end();
  upstream.proc.disconnect();
}
