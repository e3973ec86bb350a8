// node bench/mcp-client.bench.js — where the MCP SDK `Client`'s CPU a `tools/call` goes (issue #29), against the REST
// call's bare undici `Pool`: one real `mt serve` (PostgreSQL, or PGlite with BENCH_DB=pglite), bench:calls' tool and
// upstream, calls at concurrency 1 in alternating rounds; prints each client's CPU µs a call (this process's user +
// system time), the server's, and p50. Then times the client's steps one by one on a real answer of the server.
// Profile the client with `node --cpu-prof --cpu-prof-dir=DIR bench/mcp-client.bench.js` (BENCH_CLIENT=mcp: the MCP
// calls only) and `node bench/lib/cpu-profile.js DIR 40 callTool`. Needs a build and PostgreSQL (MT_TEST_PG_URL).
// Also prints the server's CPU a second with no call (BENCH_IDLE_MS, default 5000 ms, after the warm-up), and with
// BENCH_PER_ROUND=1 each round's p50, p99, client and server CPU a call, the client's GC pauses a call, and each
// target's p50 over REST's round by round (the ratio's spread); BENCH_REVERSE=1 runs the targets in reverse order;
// BENCH_FETCH_CLIENT=1 adds a second SDK Client on the global `fetch` (as bench:calls has); BENCH_SPIN_US sets the
// client spin of the control "MCP request on a bare Pool, then a client spin" (default 150).
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PerformanceObserver } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { Pool } from 'undici';
import { measure, percentile, timeEach } from './lib/measure.js';
import { poolFetch } from './lib/pool-fetch.js';
import { cpuMicros, deployGetOrder, restGetOrder, sdkGetOrder, serve, serveEnv, stop } from './lib/serve.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const DB = process.env.BENCH_DB ?? 'pg';
const ONLY = process.env.BENCH_CLIENT; // 'mcp' or 'rest' (or 'rest|mcp (sdk'): the targets whose name starts so
const SECRET = 'bench-secret-value';
const SPIN_US = Number(process.env.BENCH_SPIN_US ?? 150);
const PG_URL = process.env.MT_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** This process's CPU µs by thread name (/proc/self/task: the main thread is `node`, V8's helpers `V8 DefaultWorke`). */
function threadMicros() {
  const byName = {};
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      byName[name] = (byName[name] ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10_000;
    } catch {}
  }
  return byName;
}

const upstream = await new Promise((resolve) => {
  const proc = fork(fileURLToPath(new URL('calls.bench.js', import.meta.url)), ['--upstream'], { stdio: 'inherit' });
  proc.once('message', (m) => resolve({ proc, port: m.port }));
});
const adminKey = `mt_${randomBytes(24).toString('base64url')}`;
const env = serveEnv(adminKey);
const admin = new pg.Client({ connectionString: PG_URL });
const dbName = `mt_bench_mcpclient_${Date.now().toString(36)}`;
const dataDir = mkdtempSync(join(tmpdir(), 'mt-bench-mcpclient-'));
let server;
try {
  if (DB === 'pg') {
    await admin.connect();
    await admin.query(`CREATE DATABASE "${dbName}"`);
    const url = new URL(PG_URL);
    url.pathname = `/${dbName}`;
    server = await serve({ ...env, DATABASE_URL: url.toString() });
  } else server = await serve(env, ['--data', dataDir]);
  await deployGetOrder(server.url, adminKey, upstream.port, SECRET);

  const params = { name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'A-1001' } } };
  const http = poolFetch(server.url);
  // The answers the transport got, kept for the step timings below.
  let lastAnswer;
  const recordingFetch = async (url, init) => {
    const response = await http.fetch(url, init);
    lastAnswer = { response, init };
    return response;
  };
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${adminKey}` } },
      fetch: recordingFetch,
    }),
  );
  // BENCH_FETCH_CLIENT=1: a second SDK Client on the global `fetch`, as bench:calls has beside its MCP row (its row
  // "over MCP (client on fetch)"): the same SDK code then runs on two kinds of response object.
  const fetchClient = process.env.BENCH_FETCH_CLIENT ? new Client({ name: 'bench-fetch', version: '1' }) : undefined;
  await fetchClient?.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${adminKey}` } },
    }),
  );
  const rest = new Pool(server.url);
  const restHeaders = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
  const callBody = JSON.stringify({ arguments: params.arguments });
  const mcpHeaders = {
    authorization: `Bearer ${adminKey}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-session-id': client.transport.sessionId,
    'mcp-protocol-version': client.transport.protocolVersion,
  };
  let nextId = 1_000_000;
  const mcpUrl = new URL(`${server.url}/mcp`);
  const shared = new AbortController();
  // The MCP row's JSON-RPC request on a bare Pool, with no SDK: what the HTTP exchange alone costs the client.
  const bareMcpCall = async (signal) => {
    const { statusCode, body } = await rest.request({
      path: '/mcp',
      method: 'POST',
      headers: mcpHeaders,
      body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params }),
      ...(signal === undefined ? {} : { signal }),
    });
    const value = await body.json();
    if (statusCode !== 200 || value.result?.isError !== false) throw new Error('bare MCP call failed');
  };
  const targets = [
    {
      name: 'REST (undici Pool)',
      call: () => restGetOrder(rest, restHeaders, callBody),
    },
    {
      name: 'MCP (SDK Client, Pool fetch)',
      call: () => sdkGetOrder(client, params),
    },
    ...(fetchClient === undefined
      ? []
      : [{ name: 'MCP (SDK Client, global fetch)', call: () => sdkGetOrder(fetchClient, params) }]),
    {
      // The same JSON-RPC request on a bare Pool (not the MCP row: what the HTTP exchange alone costs the client).
      name: 'MCP request on a bare Pool',
      call: () => bareMcpCall(),
    },
    {
      // The bench's Pool fetch with what the transport gives it (Headers, its AbortController's signal), no SDK.
      name: 'MCP request on the Pool fetch',
      call: async () => {
        const response = await http.fetch(mcpUrl, {
          method: 'POST',
          headers: new Headers(mcpHeaders),
          body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params }),
          signal: shared.signal,
          redirect: 'manual',
        });
        const value = await response.json();
        if (response.status !== 200 || value.result?.isError !== false) throw new Error('fetch MCP call failed');
      },
    },
    {
      name: 'MCP request on a bare Pool with a signal',
      call: () => bareMcpCall(shared.signal),
    },
    {
      // The bare request, then the client busy for BENCH_SPIN_US (default 150) µs, about the SDK Client's extra CPU
      // a call, in a loop that touches no memory: does the server's CPU a call rise with the client's alone?
      name: 'MCP request on a bare Pool, then a client spin',
      call: async () => {
        await bareMcpCall();
        const until = performance.now() + SPIN_US / 1000;
        while (performance.now() < until) {}
      },
    },
  ].filter((t) => ONLY === undefined || ONLY.split('|').some((only) => t.name.toLowerCase().startsWith(only)));
  // BENCH_REVERSE=1: the targets in the opposite order within each round (REST last), to tell a place's bias.
  if (process.env.BENCH_REVERSE) targets.reverse();
  const base = targets.findIndex((t) => t.name.startsWith('REST'));

  for (const target of targets) await measure(target.call, 1, CALLS, 60_000);
  // The server's CPU with no call (its timers, pools, GC; the SDK Client's session and GET stream open): µs a second.
  // A row whose calls take longer is charged more of it a call, whatever its own work.
  const idleMs = Number(process.env.BENCH_IDLE_MS ?? 5000);
  const idle0 = cpuMicros(server.proc.pid);
  await new Promise((resolve) => setTimeout(resolve, idleMs));
  const idleUsPerS = ((cpuMicros(server.proc.pid) - idle0) * 1000) / idleMs;
  // The client's own garbage collections (main-thread pauses, V8's `gc` entries), by round: is a round's p50 theirs?
  let gcMs = 0;
  let gcCount = 0;
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gcMs += entry.duration;
      gcCount++;
    }
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  const totals = targets.map(() => ({ latencies: [], client: 0, server: 0, calls: 0, threads: {}, rounds: [] }));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, target] of targets.entries()) {
      const s0 = cpuMicros(server.proc.pid);
      const c0 = process.cpuUsage();
      const t0 = threadMicros();
      const gc0 = { ms: gcMs, count: gcCount };
      const { latencies } = await measure(target.call, 1, CALLS, 60_000);
      // Entries of the round's last collections are delivered after it: one turn to take them.
      await new Promise((resolve) => setImmediate(resolve));
      const c = process.cpuUsage(c0);
      for (const [name, us] of Object.entries(threadMicros())) {
        totals[i].threads[name] = (totals[i].threads[name] ?? 0) + us - (t0[name] ?? 0);
      }
      const serverUs = cpuMicros(server.proc.pid) - s0;
      totals[i].server += serverUs;
      totals[i].client += c.user + c.system;
      totals[i].calls += latencies.length;
      totals[i].latencies.push(...latencies);
      // Each round's own figures (BENCH_PER_ROUND=1 prints them): p50, client and server CPU µs a call.
      const sorted = [...latencies].sort((a, b) => a - b);
      totals[i].rounds.push({
        p50: percentile(sorted, 50),
        client: (c.user + c.system) / latencies.length,
        server: serverUs / latencies.length,
        p99: percentile(sorted, 99),
        gcUs: ((gcMs - gc0.ms) * 1000) / latencies.length,
        gcs: gcCount - gc0.count,
      });
    }
  }
  console.log(
    `${DB}, ${ROUNDS} rounds of ${CALLS} calls at concurrency 1, load ${loadavg()[0].toFixed(2)}; server idle ${idleUsPerS.toFixed(0)} µs CPU a second`,
  );
  for (const [i, target] of targets.entries()) {
    const t = totals[i];
    const p50 = percentile(
      t.latencies.sort((a, b) => a - b),
      50,
    );
    console.log(
      `${target.name}: p50 ${p50.toFixed(0)} µs, mean ${(t.latencies.reduce((a, b) => a + b, 0) / t.latencies.length).toFixed(0)} µs, client CPU ${(t.client / t.calls).toFixed(0)} µs a call, server CPU ${(t.server / t.calls).toFixed(0)} µs a call`,
    );
    const threads = Object.entries(t.threads).filter(([, us]) => us > 0);
    console.log(`  by thread: ${threads.map(([name, us]) => `${name} ${(us / t.calls).toFixed(0)}`).join(', ')}`);
    if (process.env.BENCH_PER_ROUND) {
      const f = (r) =>
        `${r.p50.toFixed(0)}/${r.p99.toFixed(0)}/${r.client.toFixed(0)}/${r.server.toFixed(0)}/${r.gcUs.toFixed(1)}(${r.gcs})`;
      console.log(
        `  rounds (p50/p99/client CPU/server CPU/client GC pause µs a call (collections)): ${t.rounds.map(f).join(' ')}`,
      );
      if (base !== -1 && i !== base) {
        // This target's p50 over REST's in the same round: how much the ratio moves from round to round.
        const ratios = t.rounds.map((r, round) => r.p50 / totals[base].rounds[round].p50);
        const sorted = [...ratios].sort((a, b) => a - b);
        console.log(
          `  p50 / REST's by round: ${ratios.map((r) => r.toFixed(2)).join(' ')} (median ${percentile(sorted, 50).toFixed(2)})`,
        );
      }
    }
  }

  // (Only when the SDK Client's calls ran: else the last answer is the initialize's, which the Client has read.)
  if (lastAnswer !== undefined && targets.some((t) => t.name.startsWith('MCP (SDK'))) {
    // The answer of the last MCP call, and the client's steps on it timed one by one (median µs of 20,000).
    const text = await lastAnswer.response.text();
    const headers = [];
    lastAnswer.response.headers.forEach((value, name) => {
      headers.push([name, value]);
    });
    console.log(`answer: ${Buffer.byteLength(text)} bytes, ${headers.length} headers: ${JSON.stringify(headers)}`);
    console.log(`body: ${text}`);
    const data = JSON.parse(text);
    const median = (fn, arg) =>
      percentile(
        timeEach(fn, arg, 20_000).sort((a, b) => a - b),
        50,
      ).toFixed(2);
    const steps = {
      'JSON.parse of the body': median(JSON.parse, text),
      'JSONRPCMessageSchema.parse (the transport)': median((d) => JSONRPCMessageSchema.parse(d), data),
      'CallToolResultSchema.safeParse (Protocol.request)': median(
        (r) => CallToolResultSchema.safeParse(r),
        data.result,
      ),
      'new Headers of the request (_commonHeaders)': median(
        (h) => new Headers(h),
        Object.fromEntries(new Headers(lastAnswer.init.headers).entries()),
      ),
      'JSON.stringify of the request': median(JSON.stringify, {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params,
      }),
      'new Headers of the answer (poolFetch)': median((h) => new Headers(h), headers),
    };
    for (const [step, us] of Object.entries(steps)) console.log(`  ${step}: ${us} µs`);
  }
  gcObserver.disconnect();
  await fetchClient?.close();
  await client.close();
  await http.close();
  await rest.close();
} finally {
  if (server !== undefined) await stop(server.proc);
  upstream.proc.disconnect();
  if (DB === 'pg') {
    await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    await admin.end();
  }
  rmSync(dataDir, { recursive: true, force: true });
}
