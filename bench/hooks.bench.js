// npm run bench:hooks — issue #47's figures: an inbound webhook's delivery (GitHub-signed) to its 2xx, p50 and p99 at
// concurrency 64, against the plain run-start route (POST /v1/interactions/{name}/runs) in the same run, in
// alternating rounds so both see the same moments of a shared machine; and the drift of a schedule of every second
// (the start of its run's transaction after the tick's time) while those requests load the server; and both one at a
// time (the issue's "2xx within 100 ms": a delivery's own latency, with no queue of others ahead of it). One real
// `mt serve` (with its worker; the runs are executed by the scripted model) on a fresh PostgreSQL database.
// Built: run `npm run build` first. BENCH_WRITE=0: print only.
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '@maitento/testkit';
import pg from 'pg';
import { percentile } from './lib/measure.js';
import { provenance, writeBenchSection } from './lib/perf-doc.js';
import { serve, serveEnv, stop } from './lib/serve.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 640);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
/** Requests each way made one at a time, in alternating blocks of 50. */
const ONE_AT_A_TIME = Number(process.env.BENCH_SEQUENTIAL ?? 200);
const SECRET = `gh-${randomBytes(16).toString('hex')}`;

const database = await createTestDatabase('mt_bench_hooks', { migrated: true });
const scripts = mkdtempSync(join(tmpdir(), 'mt-bench-hooks-'));
writeFileSync(join(scripts, 'desk.json'), JSON.stringify([{ text: 'Done.' }]));
const adminKey = `mt_${randomBytes(24).toString('base64url')}`;
const { proc, url } = await serve({ ...serveEnv(adminKey), DATABASE_URL: database.url, MT_SCRIPTED_MODELS: scripts });
const api = (method, path, body) =>
  fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

const sorted = (values) => [...values].sort((a, b) => a - b);
const ms = (n) => Number(n.toFixed(1));

/** `requests` requests made by `concurrency` closed-loop workers; the latency of each, in ms. */
async function load(make, requests = REQUESTS, concurrency = CONCURRENCY) {
  const latencies = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests) {
        next += 1;
        const { path, body, headers } = make();
        const started = performance.now();
        const res = await fetch(`${url}${path}`, { method: 'POST', headers, body });
        await res.arrayBuffer();
        if (res.status !== 201 && res.status !== 202) throw new Error(`${path} answered ${res.status}`);
        latencies.push(performance.now() - started);
      }
    }),
  );
  return latencies;
}

const runStart = () => ({
  path: '/v1/interactions/desk/runs',
  body: JSON.stringify({ inputs: { orderId: 'A-1' }, interactive: false }),
  headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
});
const hook = () => {
  const body = JSON.stringify({ action: 'opened', issue: { number: 42 } });
  return {
    path: '/v1/hooks/default/issues',
    body,
    headers: {
      'content-type': 'application/json',
      'x-github-delivery': randomUUID(),
      'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
    },
  };
};

const results = { start: [], hook: [] };
const single = { start: [], hook: [] };
let drift = [];
try {
  await api('POST', '/v1/secrets', { name: 'github-hook', value: SECRET });
  const deployed = await api('POST', '/v1/deploy', {
    files: [
      { path: 'agents/desk.mtr', content: 'model = "scripted:desk"\ninstructions = "Answer."\n' },
      {
        path: 'interactions/one-shot/desk.mtr',
        content:
          'agent = { name = "Desk" agent = @ref("desk") }\ntask = "Look at %%orderId%%"\ninputs.prompts = [ { name = "orderId" required = true } ]\n',
      },
      {
        path: 'triggers/issues.mtr',
        content:
          'interaction = @ref("desk")\ninputs = { orderId = { pointer = "/issue/number" } }\nverify = { style = "github" secret = @ref("github-hook") }\n',
      },
      {
        path: 'schedules/every-second.mtr',
        content: 'interaction = @ref("desk")\ninputs = { orderId = "tick" }\ncron = "* * * * * *"\noverlap = "allow"\n',
      },
    ],
  });
  if (deployed.status !== 200) throw new Error(`deploy answered ${deployed.status}: ${await deployed.text()}`);
  await load(runStart);
  await load(hook);
  const from = new Date();
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? ['start', 'hook'] : ['hook', 'start'];
    for (const what of order) {
      console.error(`bench: round ${r + 1} of ${ROUNDS}, ${what}`);
      results[what].push(...(await load(what === 'start' ? runStart : hook)));
    }
  }
  for (let block = 0; block < ONE_AT_A_TIME / 50; block++) {
    for (const what of block % 2 === 0 ? ['start', 'hook'] : ['hook', 'start']) {
      single[what].push(...(await load(what === 'start' ? runStart : hook, 50, 1)));
    }
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const { rows } = await client.query(
    "SELECT extract(epoch FROM recorded_at - tick) * 1000 AS ms FROM mt_schedule_ticks WHERE status = 'started' AND tick > $1",
    [from],
  );
  drift = sorted(rows.map((row) => Number(row.ms)));
  await client.end();
} finally {
  await stop(proc);
  await database.drop();
}

const start = sorted(results.start);
const hooks = sorted(results.hook);
const ratio = (p) => percentile(hooks, p) / percentile(start, p);
const startOne = sorted(single.start);
const hookOne = sorted(single.hook);
const within100 = hookOne.length > 0 && percentile(hookOne, 99) < 100;
const body = `## Schedules and inbound webhooks (\`npm run bench:hooks\`)

${provenance('npm run bench:hooks')}

One \`mt serve\` (with its worker) on PostgreSQL; ${ROUNDS} rounds of ${REQUESTS} requests each way at concurrency
${CONCURRENCY}, alternating, then ${ONE_AT_A_TIME} each way one at a time. A webhook delivery is GitHub-signed (verified with its stored secret), deduplicated by its
\`X-GitHub-Delivery\` and answered 202 once its run is stored and queued; a run start is answered 201 at the same point.
The schedule ticks every second meanwhile; its drift is the start of the tick's transaction after the tick's time.

| Request | p50 at ${CONCURRENCY} (ms) | p99 at ${CONCURRENCY} (ms) | p50 one at a time (ms) | p99 one at a time (ms) | Requests |
| --- | --- | --- | --- | --- | --- |
| \`POST /v1/interactions/{name}/runs\` | ${ms(percentile(start, 50))} | ${ms(percentile(start, 99))} | ${ms(percentile(startOne, 50))} | ${ms(percentile(startOne, 99))} | ${start.length + startOne.length} |
| \`POST /v1/hooks/{namespace}/{name}\` | ${ms(percentile(hooks, 50))} | ${ms(percentile(hooks, 99))} | ${ms(percentile(hookOne, 50))} | ${ms(percentile(hookOne, 99))} | ${hooks.length + hookOne.length} |
| webhook / run start | ${ratio(50).toFixed(2)}× | ${ratio(99).toFixed(2)}× | aim: within 1.2× | 2xx within 100 ms: ${within100 ? 'met' : 'not met'} | |

| Schedule drift under that load | p50 (ms) | p99 (ms) | Ticks | Aim: p99 < 1000 ms |
| --- | --- | --- | --- | --- |
| every second, \`overlap = "allow"\` | ${drift.length ? ms(percentile(drift, 50)) : '-'} | ${drift.length ? ms(percentile(drift, 99)) : '-'} | ${drift.length} | ${drift.length && percentile(drift, 99) < 1000 ? 'met' : 'not met'} |`;
console.log(body);
if (process.env.BENCH_WRITE !== '0') writeBenchSection('hooks', body);
