// npm run bench:gateway — the gateway in-process (as the engine calls it) against raw undici, same upstream, same run.
// Writes calls/s, p50 and p99 and the ratios into docs/performance.md between its markers (bench/lib/perf-doc.js).
import { fork } from 'node:child_process';
import { createServer } from 'node:http';

import { fileURLToPath } from 'node:url';
import { createEgressPolicy } from '@maitento/egress';
import { createGateway } from '@maitento/gateway';
import { Pool } from 'undici';
import { combine, measure } from './lib/measure.js';
import { provenance, writeBenchSection } from './lib/perf-doc.js';

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
  const section = `## Gateway: one tool call (\`npm run bench:gateway\`)

${provenance('npm run bench:gateway')}

One upstream (node:http, keep-alive, a ${Buffer.byteLength(REPLY)}-byte JSON reply, its own process) on 127.0.0.1, called
through the gateway in-process (\`gateway.call\` with new input objects parsed from JSON for every call, so no
per-object plan is reused) and with raw undici (a keep-alive \`Pool\`, \`body.json()\`). Up to ${MAX_CALLS} calls or
${MAX_MS / 1000} s per case after a warm-up, in ${ROUNDS} alternating rounds; latencies in µs.

| Concurrency | undici calls/s | gateway calls/s | gateway / undici | undici p50 / p99 | gateway p50 / p99 | added at p50 |
| ----------- | -------------- | --------------- | ---------------- | ---------------- | ----------------- | ------------ |
${table}

Aims: at least 0.85 of raw undici's throughput at concurrency 64 (measured: ${ratio64.toFixed(2)}, ${ratio64 >= 0.85 ? 'met' : 'not met'}),
and under 30 µs added at p50 at concurrency 1 (measured: ${f(added1)} µs, ${added1 < 30 ? 'met' : 'not met'}). A server's
calls reuse the per-object plan (its version cache returns the same frozen objects), which this bench does not.`;
  writeBenchSection('gateway', section);
}
