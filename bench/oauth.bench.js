// npm run bench:oauth — issue #43's figures (test 8) through a real `mt serve` on PostgreSQL, a real authorization
// server (oidc-provider, test/e2e/helpers/authorization-server.ts) and one local upstream in a process of its own:
// - a tool call with `auth = "OAuth2"` and the end user's stored, live token against the same tool with a Header
//   secret: runs of the scripted model, each one turn of CALLS calls of one tool, the two tools in alternating rounds.
//   A call's time is the gap between its arrival at the upstream and the arrival of the call before it in the same run
//   (µs, the upstream's clock): everything the engine does a call — store the result, read the credential (the
//   connection, unsealed, for OAuth2; the cached secret for Header), mark the next call started, send it;
// - the time from the OAuth callback (the person's browser opening it) to the resumed run's call reaching the
//   upstream: a run for a person with no connection waits PendingAuthorization; the bench completes its connect URL
//   at the authorization server, then opens the callback and times until the upstream sees the call.
// Writes the bench:oauth section of docs/performance.md (BENCH_WRITE=0: print only). Needs `npm run build` and
// PostgreSQL at 127.0.0.1:5432 (MT_TEST_PG_URL); sends traffic only to 127.0.0.1.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { authorize, freePort, startAuthorizationServer } from '../test/e2e/helpers/authorization-server.ts';
import { percentile } from './lib/measure.js';
import { provenance, writeBenchSection } from './lib/perf-doc.js';
import { cpuMicros, serveEnv, serve, stop } from './lib/serve.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const RUNS = Number(process.env.BENCH_RUNS ?? 1);
const CALLS = Number(process.env.BENCH_CALLS ?? 10);
const RESUMES = Number(process.env.BENCH_RESUMES ?? 12);
const WARMUP = 3;
// Profiling: BENCH_ONLY=header or oauth measures that tool alone (with BENCH_SERVE_NODE_ARGS="--cpu-prof ..."; the
// docs are then not written).
const ONLY = process.env.BENCH_ONLY;
const SECRET = 'bench-secret-value';
const PG_URL = process.env.MT_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REPLY = JSON.stringify({ id: 'A-1001', status: 'shipped', total: 12.5 });
const now = () => performance.timeOrigin + performance.now();

if (process.argv[2] === '--upstream') {
  // The upstream: a Header call must carry the secret, an OAuth2 call a Bearer token. It notes when each call
  // arrives (ms since the epoch, sub-ms) and hands the notes over when the bench asks.
  let arrivals = [];
  const server = createServer((req, res) => {
    const at = now();
    req.resume();
    req.on('end', () => {
      const bearer = /^Bearer \S{20,}$/.test(req.headers.authorization ?? '');
      const ok = req.url.startsWith('/header/') ? req.headers['x-api-key'] === SECRET : bearer;
      arrivals.push({ at, path: req.url });
      if (!ok) res.writeHead(401).end();
      else
        res
          .writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(REPLY) })
          .end(REPLY);
    });
  });
  server.keepAliveTimeout = 60_000;
  process.on('message', () => {
    process.send?.(arrivals);
    arrivals = [];
  });
  server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }));
  process.on('disconnect', () => process.exit(0));
} else {
  await main();
}

/** The upstream's notes since the last ask. */
function arrivalsOf(upstream) {
  return new Promise((resolve) => {
    upstream.once('message', resolve);
    upstream.send('arrivals');
  });
}

async function request(url, key, method, path, body) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** Polls the run every 5 ms until `until(run)`, within 30 s. */
async function waitFor(url, key, id, until) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const run = await request(url, key, 'GET', `/v1/runs/${id}`);
    if (until(run)) return run;
    if (['Failed', 'Cancelled'].includes(run.status) || Date.now() > deadline) {
      throw new Error(`run ${id}: ${JSON.stringify(run)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function files(upstreamUrl, issuer) {
  const tool = (name, connector, auth = '') => ({
    path: `external-operations/open-api/${name}.mtr`,
    content: `connector = @ref("${connector}")\nguidance = "Looks up an order."\n${auth}`,
  });
  const agentAndInteraction = (name, toolName) => [
    {
      path: `agents/${name}-agent.mtr`,
      content: `model = "scripted:${name}"\ninstructions = "Look up orders."\nfunctions = [ { ref = @ref("${toolName}") } ]\n`,
    },
    {
      path: `interactions/one-shot/${name}.mtr`,
      content: `agent = { name = "Bench" agent = @ref("${name}-agent") }\ntask = "Look up the order."\n`,
    },
  ];
  return [
    {
      path: 'auth-providers/local-as.mtr',
      content: `issuer = "${issuer}"\nclientId = "maitento-e2e"\nclientSecret = @ref("local-as-client-secret")\nscopes = ["openid", "offline_access"]\nauthorizationParams = { prompt = "consent" }\n`,
    },
    {
      path: 'connectors/open-api/orders-header.mtr',
      content: `method = "GET"\nurl = "${upstreamUrl}/header/orders/A-1001"\ndescription = "One order"\nauth = "Header"\n`,
    },
    {
      path: 'connectors/open-api/orders-oauth.mtr',
      content: `method = "GET"\nurl = "${upstreamUrl}/oauth/orders/A-1001"\ndescription = "One order"\nauth = "OAuth2"\nprovider = @ref("local-as")\n`,
    },
    {
      path: 'connectors/open-api/orders-resume.mtr',
      content: `method = "GET"\nurl = "${upstreamUrl}/resume/orders/A-1001"\ndescription = "One order"\nauth = "OAuth2"\nprovider = @ref("local-as")\n`,
    },
    tool('get-order-header', 'orders-header', 'auth = { header = "X-Api-Key" secret = @ref("orders-key") }\n'),
    tool('get-order-oauth', 'orders-oauth'),
    tool('get-order-resume', 'orders-resume'),
    ...agentAndInteraction('header', 'get-order-header'),
    ...agentAndInteraction('oauth', 'get-order-oauth'),
    ...agentAndInteraction('resume', 'get-order-resume'),
  ];
}

async function main() {
  const began = performance.now();
  const upstream = fork(fileURLToPath(import.meta.url), ['--upstream'], { stdio: 'inherit' });
  const upstreamPort = await new Promise((resolve) => upstream.once('message', (m) => resolve(m.port)));
  const upstreamUrl = `http://127.0.0.1:${upstreamPort}`;
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const callbackUrl = `${origin}/v1/connections/callback`;
  const as = await startAuthorizationServer({ redirectUri: callbackUrl });
  const scripts = mkdtempSync(join(tmpdir(), 'mt-bench-oauth-'));
  for (const name of ['header', 'oauth']) {
    const call = { name: `get-order-${name}`, arguments: {} };
    writeFileSync(
      join(scripts, `${name}.json`),
      JSON.stringify([{ toolCalls: Array.from({ length: CALLS }, () => call) }, { text: 'Shipped.' }]),
    );
  }
  writeFileSync(
    join(scripts, 'resume.json'),
    JSON.stringify([{ toolCalls: [{ name: 'get-order-resume', arguments: {} }] }, { text: 'Shipped.' }]),
  );
  const dbName = `mt_bench_oauth_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${dbName}"`);
  const dbUrl = new URL(PG_URL);
  dbUrl.pathname = `/${dbName}`;
  const key = `mt_${randomBytes(24).toString('base64url')}`;
  let server;
  try {
    server = await serve(
      { ...serveEnv(key), DATABASE_URL: dbUrl.toString(), MT_PUBLIC_URL: origin, MT_SCRIPTED_MODELS: scripts },
      ['--port', String(port)],
    );
    const url = server.url;
    await request(url, key, 'POST', '/v1/secrets', { name: 'orders-key', value: SECRET });
    await request(url, key, 'POST', '/v1/secrets', { name: 'local-as-client-secret', value: as.clientSecret });
    await request(url, key, 'POST', '/v1/deploy', { files: files(upstreamUrl, as.issuer) });

    // The person the OAuth2 runs act for, connected once: every call then uses the stored, live token.
    const link = await request(url, key, 'POST', '/v1/connections/links', { provider: 'local-as', endUser: 'ada' });
    const back = await authorize(link.url, 'ada-sub', callbackUrl);
    const done = await fetch(back, { redirect: 'manual', signal: AbortSignal.timeout(15_000) });
    if (done.status !== 200) throw new Error(`callback: ${done.status} ${await done.text()}`);

    // The serving process's CPU time, by tool (µs), over the measured runs: less at the mercy of a busy machine.
    const cpu = { header: 0, oauth: 0 };
    /** One run of `name` for ada: the gaps (µs) between its calls' arrivals at the upstream. */
    const gapsOf = async (name) => {
      await arrivalsOf(upstream);
      const cpu0 = cpuMicros(server.proc.pid) ?? 0;
      const run = await request(url, key, 'POST', `/v1/interactions/${name}/runs`, { inputs: {}, endUser: 'ada' });
      await waitFor(url, key, run.id, (r) => r.status === 'Completed');
      cpu[name] += (cpuMicros(server.proc.pid) ?? 0) - cpu0;
      const times = (await arrivalsOf(upstream)).filter((a) => a.path.startsWith(`/${name}/`)).map((a) => a.at);
      if (times.length !== CALLS) throw new Error(`run ${run.id} of ${name} made ${times.length} calls, not ${CALLS}`);
      return times.slice(1).map((t, i) => (t - times[i]) * 1000);
    };
    for (let i = 0; i < WARMUP; i++)
      for (const name of ['header', 'oauth']) if (!ONLY || name === ONLY) await gapsOf(name);
    cpu.header = 0;
    cpu.oauth = 0;
    const gaps = { header: [], oauth: [] };
    const ratios = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = (round % 2 === 0 ? ['header', 'oauth'] : ['oauth', 'header']).filter((k) => !ONLY || k === ONLY);
      const these = { header: [], oauth: [] };
      for (const name of order) for (let r = 0; r < RUNS; r++) these[name].push(...(await gapsOf(name)));
      for (const name of order) gaps[name].push(...these[name]);
      const p50 = (values) =>
        percentile(
          [...values].sort((a, b) => a - b),
          50,
        );
      if (!ONLY) ratios.push(p50(these.oauth) / p50(these.header));
      console.error(
        `round ${round + 1}: header p50 ${p50(these.header)?.toFixed(0)} µs, oauth ${p50(these.oauth)?.toFixed(0)} µs`,
      );
    }

    // Callback → the resumed run's call: each time a new person, who has no connection, so the run waits.
    const resumes = [];
    const callbacks = [];
    for (let i = 0; i < RESUMES + 1; i++) {
      const endUser = `person-${i}`;
      const run = await request(url, key, 'POST', '/v1/interactions/resume/runs', { inputs: {}, endUser });
      const waiting = await waitFor(url, key, run.id, (r) => r.status === 'PendingAuthorization');
      const callback = await authorize(waiting.pendingAuthorization.url, `${endUser}-sub`, callbackUrl);
      await arrivalsOf(upstream);
      const t0 = now();
      const answer = await fetch(callback, { redirect: 'manual', signal: AbortSignal.timeout(15_000) });
      const t1 = now();
      if (answer.status !== 200) throw new Error(`callback: ${answer.status} ${await answer.text()}`);
      await waitFor(url, key, run.id, (r) => r.status === 'Completed');
      const [call] = (await arrivalsOf(upstream)).filter((a) => a.path.startsWith('/resume/'));
      if (call === undefined) throw new Error(`run ${run.id} made no call after the callback`);
      // The first is a warm-up (the first callback's code paths).
      if (i === 0) continue;
      resumes.push(call.at - t0);
      callbacks.push(t1 - t0);
    }
    const sorted = (values) => [...values].sort((a, b) => a - b);
    const stats = (values) => ({
      n: values.length,
      p50: percentile(sorted(values), 50),
      p99: percentile(sorted(values), 99),
    });
    const result = {
      header: stats(gaps.header),
      oauth: stats(gaps.oauth),
      // The median over rounds of each round's ratio (a load that changes between rounds falls on both sides of it),
      // its quartiles, and the ratio of the p50s over every call.
      ratio: percentile(sorted(ratios), 50),
      ratioRange: [percentile(sorted(ratios), 25), percentile(sorted(ratios), 75)],
      pooled: percentile(sorted(gaps.oauth), 50) / percentile(sorted(gaps.header), 50),
      resume: { ...stats(resumes), max: Math.max(...resumes) },
      callback: stats(callbacks),
      cpuPerRun: { header: cpu.header / (ROUNDS * RUNS), oauth: cpu.oauth / (ROUNDS * RUNS) },
      seconds: (performance.now() - began) / 1000,
    };
    console.error(JSON.stringify(result));
    if (process.env.BENCH_WRITE !== '0' && !ONLY) writeSection(result);
  } finally {
    if (server) await stop(server.proc);
    upstream.disconnect();
    await as.close();
    await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    await admin.end();
    rmSync(scripts, { recursive: true, force: true });
  }
}

function writeSection(r) {
  const f = (n) => n.toFixed(0);
  const ms = (n) => n.toFixed(1);
  // Compact (no blank lines inside the paragraph): the page stays under 400 lines.
  const section = `## OAuth2 tool calls (\`npm run bench:oauth\`)
${provenance('npm run build && npm run bench:oauth')}
Runs of the scripted model through \`mt serve\` (PostgreSQL), each one turn of ${CALLS} calls of one tool to a local upstream: a Header secret, or \`auth = "OAuth2"\` with the end user's stored live token; ${ROUNDS} alternating rounds of ${RUNS} run${RUNS === 1 ? '' : 's'} each. A call's time is the gap between its arrival at the upstream and the one before it: store the result, mark the next call started (for OAuth2, reading the connection meanwhile: decision 0280), send. The ratio is the median over rounds of each round's ratio of p50s. Then ${r.resume.n} runs that waited \`PendingAuthorization\`: from opening the callback to the resumed run's call at the upstream. The run took ${f(r.seconds)} s. A call's time holds every wait for a core (the load average above): the quartiles over rounds say how far the ratio holds; the CPU row is the serving process's own work a run.

| Figure | Header secret | OAuth2 | Aim |
| --- | --- | --- | --- |
| A call, p50 / p99 µs (${r.oauth.n} calls each) | ${f(r.header.p50)} / ${f(r.header.p99)} | ${f(r.oauth.p50)} / ${f(r.oauth.p99)} | ≤ 1.1 × Header: ${r.ratio.toFixed(2)} × (quartiles ${r.ratioRange.map((x) => x.toFixed(2)).join('–')}; over every call ${r.pooled.toFixed(2)} ×), ${r.ratio <= 1.1 ? 'met' : 'not met'} |
| \`mt serve\`'s CPU a run of ${CALLS} calls, µs | ${f(r.cpuPerRun.header)} | ${f(r.cpuPerRun.oauth)} | |
| Callback → the resumed run's call, p50 / max ms (the callback's own answer: p50 ${ms(r.callback.p50)}) | | ${ms(r.resume.p50)} / ${ms(r.resume.max)} | < 500 ms at p50: ${r.resume.p50 < 500 ? 'met' : 'not met'} (max ${r.resume.max < 500 ? 'under' : 'over'} it) |`;
  writeBenchSection('oauth', section);
}
