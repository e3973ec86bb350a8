// npm run bench:gateway — the gateway in-process (as the engine calls it) against raw undici, same upstream, same run.
// Writes calls/s, p50 and p99 and the ratios into docs/performance.md between the bench:gateway markers.
import { fork } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createEgressPolicy } from '@maitento/egress';
import { createGateway } from '@maitento/gateway';
import { Pool } from 'undici';
import { combine, measure } from './lib/measure.js';

const MAX_CALLS = Number(process.env.BENCH_CALLS ?? 20_000);
const MAX_MS = Number(process.env.BENCH_MS ?? 10_000);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3_000);
const ROUNDS = 4;
const REPLY = JSON.stringify({ id: 'A-1001', status: 'shipped', total: 12.5, items: [{ sku: 'MUG-1', qty: 1 }] });

if (process.argv[2] === '--upstream') {
  // The upstream runs in its own process so its CPU time is not charged to either client.
  const server = createServer((req, res) => {
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

async function main() {
  const child = fork(fileURLToPath(import.meta.url), ['--upstream'], { stdio: 'inherit' });
  const port = await new Promise((resolve) => child.once('message', (m) => resolve(m.port)));
  const origin = `http://127.0.0.1:${port}`;

  const connector = {
    kind: 'connector',
    name: 'orders-get-order',
    method: 'GET',
    url: `${origin}/orders/{orderId}`,
    description: 'One order',
    parameters: {
      path: [{ name: 'orderId', type: 'string', required: true }],
      query: [{ name: 'expand', type: 'boolean', required: false }],
    },
    schema: {
      response: { type: 'object', properties: { id: { type: 'string' }, total: { type: 'number' } }, required: ['id'] },
    },
    auth: 'Header',
  };
  const tool = {
    kind: 'tool',
    name: 'get-order',
    connector: 'orders-get-order',
    guidance: 'Gets one order.',
    bindings: { request: {}, query: { expand: true }, path: {} },
    auth: { header: 'X-Api-Key', secret: 'orders-api-key' },
    requiresApproval: false,
  };
  // Every call gets new objects parsed from JSON, as a server that loads the tool and connector from the database
  // for each call hands them over: nothing can be found again by object identity.
  const inputJson = JSON.stringify({
    tool,
    connector,
    arguments: { additionalInputs: { 'path.orderId': 'A-1001' } },
    credential: { header: 'X-Api-Key', value: 'bench-secret-value' },
  });
  const gateway = createGateway({ policy: createEgressPolicy({ allow: '127.0.0.1/32' }) });
  const pool = new Pool(origin);
  const headers = {
    'user-agent': 'Maitento/0.1',
    accept: 'application/json, */*;q=0.5',
    'x-api-key': 'bench-secret-value',
  };

  const viaGateway = async () => {
    const result = await gateway.call(JSON.parse(inputJson));
    if (!result.ok) throw new Error(`gateway call failed: ${JSON.stringify(result)}`);
  };
  const viaUndici = async () => {
    const { statusCode, body } = await pool.request({ path: '/orders/A-1001?expand=true', method: 'GET', headers });
    const value = await body.json();
    if (statusCode !== 200 || value.id !== 'A-1001') throw new Error('raw call failed');
  };

  const rows = [];
  for (const concurrency of [1, 64]) {
    await measure(viaUndici, concurrency, WARMUP, MAX_MS);
    await measure(viaGateway, concurrency, WARMUP, MAX_MS);
    // Alternating rounds, so a change in machine load during the run weighs on both sides alike.
    const rawRounds = [];
    const gwRounds = [];
    for (let round = 0; round < ROUNDS; round++) {
      rawRounds.push(await measure(viaUndici, concurrency, MAX_CALLS / ROUNDS, MAX_MS / ROUNDS));
      gwRounds.push(await measure(viaGateway, concurrency, MAX_CALLS / ROUNDS, MAX_MS / ROUNDS));
    }
    const raw = combine(rawRounds);
    const gw = combine(gwRounds);
    rows.push({ concurrency, raw, gw });
    console.error(
      `c=${concurrency}: undici ${raw.perSecond.toFixed(0)}/s p50 ${raw.p50.toFixed(0)}µs p99 ${raw.p99.toFixed(0)}µs; ` +
        `gateway ${gw.perSecond.toFixed(0)}/s p50 ${gw.p50.toFixed(0)}µs p99 ${gw.p99.toFixed(0)}µs; ` +
        `ratio ${(gw.perSecond / raw.perSecond).toFixed(2)}`,
    );
  }
  await gateway.close();
  await pool.close();
  child.disconnect();

  const load = loadavg()[0].toFixed(1);
  const c1 = rows.find((r) => r.concurrency === 1);
  const c64 = rows.find((r) => r.concurrency === 64);
  const f = (n) => n.toFixed(0);
  const ratio64 = c64.gw.perSecond / c64.raw.perSecond;
  const added1 = c1.gw.p50 - c1.raw.p50;
  const table = rows
    .map(
      ({ concurrency, raw, gw }) =>
        `| ${concurrency} | ${f(raw.perSecond)} | ${f(gw.perSecond)} | ${(gw.perSecond / raw.perSecond).toFixed(2)} | ` +
        `${f(raw.p50)} / ${f(raw.p99)} | ${f(gw.p50)} / ${f(gw.p99)} | ${f(gw.p50 - raw.p50)} |`,
    )
    .join('\n');
  const section = `<!-- bench:gateway -->
## Gateway: one tool call (\`npm run bench:gateway\`)

One upstream (node:http, keep-alive, a ${Buffer.byteLength(REPLY)}-byte JSON reply, in its own process) on 127.0.0.1,
called in the same run through the gateway in-process (\`gateway.call\` with new input objects parsed from JSON for every call, as
loaded from a database, so no per-object plan is reused: argument checks, bindings, URL building,
header auth, the address check, the egress agent, body read, response schema check, secret redaction) and with raw
undici (a keep-alive \`Pool\`, \`body.json()\`). Up to ${MAX_CALLS} calls or ${MAX_MS / 1000} s per case after a warm-up, in ${ROUNDS} alternating rounds; latencies in µs.
Measured on ${cpus()[0]?.model ?? 'unknown CPU'}, ${availableParallelism()} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node.js ${process.versions.node}, load average ${load} at the end of the run (other work on the machine skews both sides).

| Concurrency | undici calls/s | gateway calls/s | gateway / undici | undici p50 / p99 | gateway p50 / p99 | added at p50 |
| ----------- | -------------- | --------------- | ---------------- | ---------------- | ----------------- | ------------ |
${table}

Aims: at least 0.85 of raw undici's throughput at concurrency 64 (measured: ${ratio64.toFixed(2)}, ${ratio64 >= 0.85 ? 'met' : 'not met'}),
and under 30 µs added at p50 at concurrency 1 (measured: ${f(added1)} µs, ${added1 < 30 ? 'met' : 'not met'}).

Fresh objects per call: until this bench gave the gateway new input objects for every call it passed the same ones each
time and measured 1.07 of raw undici at concurrency 64 and 2 µs added at p50 at concurrency 1; the difference to the figures
above is \`JSON.parse\` of the input plus the per-object plan (URL template, parameter maps, bindings, the first hop's
header object) built again for every call. The server does not hand the gateway fresh objects: its version cache returns
the same frozen objects for a stored version (see bench:calls below), so a server's calls reuse the plan as the
same-object figures did.

Where the difference goes: the gateway is ${ratio64 >= 1.05 ? 'ahead of' : ratio64 > 0.95 ? 'level with (within the run-to-run spread)' : 'behind'} raw undici here
(${ratio64.toFixed(2)}). It does not use undici's \`request\`: each hop is one \`dispatcher.dispatch\` with the
gateway's own handler, which collects the body straight into a chunk list (no \`BodyReadable\` stream, no
per-call stream reading), while raw undici's side pays for \`request\` and
\`body.json()\`; that saving is about what the gateway's own steps and their garbage cost.
The gateway's own steps (arguments, bindings, validation, URL, auth, result shaping, response schema, redaction, the
deadline) take a few µs a call (CPU profiles taken for an earlier version: under a tenth of the client's busy time).
What was removed from the hot path: per-call URL template parsing
(once per connector object), ajv compilation (cached by schema text), DNS lookups (a checked host is remembered 30 s;
the agent still judges every new connection's address), \`new URL\` for the first request, undici's
\`request\` API and its body stream (a dispatch handler per hop; the call's \`AbortSignal\` aborts through its
controller), redactor construction (cached per secret), and a header object per
call (the first hop's headers are reused while a tool's credential stays the same). On a machine
shared with other work the ratio moves by ±0.1 from run to run; the rounds alternate so both sides see the same load.

Plain code (issue #10): the hand-made \`Deadline\` (a listener array, one watcher slot, one coarse clock per gateway)
and the values that were sometimes promises (\`assemble\`, \`resolveAuth\`, the authorizer, \`call\`/\`prepare\`
branching on \`instanceof Promise\`) were replaced by \`async\` functions and a standard \`AbortSignal\` per call
(an \`AbortController\`, a timer cleared when the call ends, a listener on the caller's signal; the hop's dispatch
handler listens to the signal). Not \`AbortSignal.any([caller, AbortSignal.timeout(ms)])\`: with a caller's signal
that costs 8 to 10 µs a call in a micro-benchmark against under 0.5 µs. Three runs each, gateway / undici: before
0.75, 0.69, 0.59 at concurrency 1 and 0.65, 0.76, 0.78 at 64; after 0.79, 0.78, 0.76 and 0.62, 0.57, 0.64. The old and
the new build side by side in one process (12 rotated rounds, medians of calls/s, new / old) gave 0.87 to 1.05 at
concurrency 1 and 0.80 to 0.97 at 64 (0.90 to 0.94 with a caller's signal, as the engine calls). No single piece
accounts for the difference at 64: the synchronous assembling put back, or a coarse clock in place of the timer,
measured no better than the plain code (0.74 to 0.94 of the old). Decision: the plain code stays. At concurrency 1,
where a call takes about 200 µs, the difference is in the noise; at 64 the plain code measured lower in every run, by
about 0.1 of undici's throughput (as large as the run-to-run spread), and neither trick put back alone recovers it.
On the path users take the difference does not show: \`npm run bench:calls\` on a quiet machine, two runs of the plain
code and three of the tricks put back (\`git revert --no-commit 7326533\`), \`mt serve\` on PostgreSQL: at concurrency 64,
0.74 and 0.84 of the fastify proxy's calls/s with the plain code against 0.79, 0.81 and 0.87; at concurrency 1, 449 and
439 µs over raw undici at p50 against 512, 475 and 473 µs.
<!-- /bench:gateway -->`;
  const docPath = fileURLToPath(new URL('../docs/performance.md', import.meta.url));
  const doc = readFileSync(docPath, 'utf8');
  const start = doc.indexOf('<!-- bench:gateway -->');
  const endMarker = '<!-- /bench:gateway -->';
  const end = doc.indexOf(endMarker);
  if (start < 0 || end < 0) throw new Error('docs/performance.md has no bench:gateway markers');
  writeFileSync(docPath, doc.slice(0, start) + section + doc.slice(end + endMarker.length));
  console.error('wrote docs/performance.md (bench:gateway)');
}
