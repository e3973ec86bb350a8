// Real runs through a real `mt serve` (PostgreSQL, the scripted model, a local upstream), for the benches that
// measure a whole process: RSS before and after N runs, with OpenTelemetry off and with its collector down.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { rssMiB, serve, stop } from './serve.js';

const PG_URL = process.env.MT_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const CONCURRENCY = 8;
const WARMUP = 50;

// One tool call (get-order on the local upstream), then the answer.
export const SCRIPT = [
  { toolCalls: [{ name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'A-1001' } } }] },
  { text: 'Your order has shipped.' },
];

export function files(upstream) {
  return [
    {
      path: 'connectors/open-api/orders-get.mtr',
      content: `method = "GET"\nurl = "${upstream}/orders/{orderId}"\ndescription = "One order by its id"\nauth = "Header"\nparameters.path = [ { name = "orderId" description = "The order id" type = "string" } ]\n`,
    },
    {
      path: 'external-operations/open-api/get-order.mtr',
      content: `connector = @ref("orders-get")\nguidance = "Looks up an order by its id."\nauth = { header = "X-Api-Key" secret = @ref("orders-key") }\n`,
    },
    {
      path: 'agents/support-agent.mtr',
      content: `model = "scripted:bench"\ninstructions = "Help customers with their orders."\nfunctions = [ { ref = @ref("get-order") } ]\n`,
    },
    {
      path: 'interactions/one-shot/support.mtr',
      content: `agent = { name = "Support" agent = @ref("support-agent") }\ntask = "A customer writes: %%message%%"\ninputs.prompts = [ { name = "message" description = "What the customer wrote" required = true } ]\n`,
    },
  ];
}

export async function call(url, key, method, path, body) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

// `count` runs, `concurrency` at a time, each polled until it completed.
export async function runMany(url, key, count, concurrency = CONCURRENCY) {
  let next = 0;
  async function worker() {
    while (next < count) {
      next++;
      const run = await call(url, key, 'POST', '/v1/interactions/support/runs', {
        inputs: { message: 'Where is A-1001?' },
      });
      for (;;) {
        const now = await call(url, key, 'GET', `/v1/runs/${run.id}`);
        if (now.status === 'Completed') break;
        if (now.status !== 'Running') throw new Error(`run ${run.id} ended ${now.status}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/**
 * Two `mt serve` processes one after the other, each on a fresh database: OpenTelemetry off, then on with its
 * endpoint `deadUrl` (nothing listening). Each does WARMUP runs, then `runs` more; RSS after each, and the stop's time.
 */
export async function realRuns(runs, deadUrl) {
  const upstream = createServer((req, res) => {
    req.resume();
    const reply = JSON.stringify({ id: 'A-1001', status: 'shipped' });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) }).end(reply);
  });
  await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${upstream.address().port}`;
  const scripts = mkdtempSync(join(tmpdir(), 'mt-bench-scripts-'));
  writeFileSync(join(scripts, 'bench.json'), JSON.stringify(SCRIPT));
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const rows = [];
  try {
    for (const [name, otel] of [
      ['OpenTelemetry off', {}],
      ['collector down', { OTEL_EXPORTER_OTLP_ENDPOINT: deadUrl }],
    ]) {
      const dbName = `mt_bench_rss_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
      await admin.query(`CREATE DATABASE "${dbName}"`);
      const dbUrl = new URL(PG_URL);
      dbUrl.pathname = `/${dbName}`;
      const key = `mt_${randomBytes(24).toString('base64url')}`;
      const server = await serve({
        MT_SECRET_KEY: randomBytes(32).toString('hex'),
        MT_BOOTSTRAP_KEY: key,
        MT_EGRESS_ALLOW: '127.0.0.1/32',
        MT_SCRIPTED_MODELS: scripts,
        MT_LOG_LEVEL: 'info',
        DATABASE_URL: dbUrl.toString(),
        OTEL_EXPORTER_OTLP_ENDPOINT: '',
        ...otel,
      });
      try {
        await call(server.url, key, 'POST', '/v1/secrets', { name: 'orders-key', value: 'sk-bench' });
        await call(server.url, key, 'POST', '/v1/deploy', { files: files(origin) });
        await runMany(server.url, key, WARMUP);
        const before = rssMiB(server.proc.pid);
        const begin = performance.now();
        // RSS after every quarter of the runs: a plateau and a leak look alike in one figure.
        const series = [];
        for (let done = 0; done < runs; ) {
          const chunk = Math.min(Math.ceil(runs / 4), runs - done);
          await runMany(server.url, key, chunk);
          done += chunk;
          series.push(rssMiB(server.proc.pid));
        }
        const seconds = (performance.now() - begin) / 1000;
        const after = series.at(-1);
        const stop0 = performance.now();
        await stop(server.proc);
        rows.push({ name, before, after, series, perSecond: runs / seconds, stopMs: performance.now() - stop0 });
        console.error(`${name}: RSS ${before?.toFixed(1)} → ${after?.toFixed(1)} MiB over ${runs} runs`);
      } finally {
        await stop(server.proc);
        await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
      }
    }
  } finally {
    await admin.end();
    upstream.close();
    rmSync(scripts, { recursive: true, force: true });
  }
  return { runs, warmup: WARMUP, concurrency: CONCURRENCY, rows };
}
