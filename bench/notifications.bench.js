// npm run bench:notifications — issue #49's figure: 1,000 webhook events to a slow receiver do not slow runs.
// A real `mt serve` (PostgreSQL, the fake OpenAI model and upstream of bench:runs in a process of their own) runs
// RUNS runs of one tool call (`lookup`: model → tool → model) at once, in alternating rounds:
// - "no endpoint": no webhook endpoint, nothing is written or sent;
// - "slow receiver": an endpoint for every event whose receiver answers each delivery after SLOW_MS, with 1,000 test
//   events queued just before the runs start (and every run's own run.completed), so the delivery loop is busy with
//   all of its slots waiting on the receiver during the whole batch.
// Measures each round's runs/s and run latencies (start → end), and how many deliveries the receiver got meanwhile.
// Built: run `npm run build` first. BENCH_WRITE=0: print only.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT } from './lib/baseline.js';
import { percentile } from './lib/measure.js';
import { provenance, writeBenchSection } from './lib/perf-doc.js';
import { loadVersion, NS, setUpDatabase } from './lib/runs-version.js';
import { serve, stop } from './lib/serve.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const RUNS = Number(process.env.BENCH_RUNS ?? 100);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 1000);
const SLOW_MS = Number(process.env.BENCH_SLOW_MS ?? 500);
const round2 = (n) => Number(n.toFixed(2));
// The median, the mean of the two middle values of an even count.
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const servers = fork(fileURLToPath(new URL('./lib/runs-servers.js', import.meta.url)), [], { stdio: 'inherit' });
const ports = await new Promise((resolve) => servers.once('message', resolve));

// The slow receiver: every delivery answered 204 after SLOW_MS.
let received = 0;
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () =>
    setTimeout(() => {
      received++;
      res.writeHead(204).end();
    }, SLOW_MS),
  );
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${receiver.address().port}/hook`;

const v = await loadVersion(REPO_ROOT);
const secretKey = randomBytes(32);
const { database, db } = await setUpDatabase(v, 'mt_bench_notify', `http://127.0.0.1:${ports.upstream}`, secretKey);
const { key } = await v.store.createApiKey(db, NS, { role: 'admin', name: 'bench' });
const { proc, url } = await serve({
  DATABASE_URL: database.url,
  MT_SECRET_KEY: secretKey.toString('hex'),
  MT_EGRESS_ALLOW: '127.0.0.1/32',
  OPENAI_BASE_URL: `http://127.0.0.1:${ports.model}/v1`,
  OPENAI_API_KEY: 'k',
  MT_LOG_LEVEL: 'warn',
});

async function api(method, path, body) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

const endpoint = await api('POST', '/v1/webhooks', { url: receiverUrl, enabled: false });
const endpointId = endpoint.endpoint.id;

let counter = 0;
async function batch() {
  const started = performance.now();
  const runs = await Promise.all(
    Array.from({ length: RUNS }, async () => {
      const t0 = Date.now();
      const run = await api('POST', '/v1/interactions/lookup/runs', {
        inputs: { message: `bench-message-${++counter}-` },
      });
      return { id: run.id, t0 };
    }),
  );
  const pending = new Map(runs.map((r) => [r.id, r.t0]));
  const latencies = [];
  while (pending.size > 0) {
    await new Promise((r) => setTimeout(r, 20));
    const { rows } = await db.query(
      "SELECT id, status, extract(epoch from updated_at) * 1000 AS at FROM mt_runs WHERE id = ANY($1::uuid[]) AND status <> 'Running'",
      [[...pending.keys()]],
    );
    for (const row of rows) {
      if (row.status !== 'Completed') throw new Error(`run ${row.id} ended ${row.status}`);
      latencies.push(Number(row.at) - pending.get(row.id));
      pending.delete(row.id);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  return { runsPerSecond: RUNS / seconds, latencies };
}

const results = { none: [], slow: [] };
try {
  // Warm-up: the first batches of a fresh process are slower (JIT, pools, the queue's first fetches).
  await batch();
  await batch();
  for (let r = 0; r < ROUNDS; r++) {
    for (const scenario of r % 2 === 0 ? ['none', 'slow'] : ['slow', 'none']) {
      // Nothing left from a round before: no pending delivery, the endpoint on only for the slow round.
      await db.query("DELETE FROM mt_webhook_deliveries WHERE status = 'Pending'");
      await api('PUT', `/v1/webhooks/${endpointId}`, { enabled: scenario === 'slow' });
      if (scenario === 'slow') {
        // 1,000 events queued at once (a burst of approvals and runs ending), then the runs start.
        await db.query(
          'INSERT INTO mt_webhook_deliveries (id, endpoint_id, namespace, event_type, payload) ' +
            "SELECT gen_random_uuid(), $1, $2, 'webhook.test', json_build_object('type', 'webhook.test', " +
            "'timestamp', now(), 'data', json_build_object('n', n))::text FROM generate_series(1, $3) n",
          [endpointId, NS, EVENTS],
        );
        await db.query("SELECT pg_notify('mt_wake', 'webhooks')");
      }
      const before = received;
      const figures = await batch();
      const { rows } = await db.query(
        "SELECT count(*)::int AS n FROM mt_webhook_deliveries WHERE status = 'Pending' AND endpoint_id = $1",
        [endpointId],
      );
      results[scenario].push({ ...figures, delivered: received - before, pendingAfter: rows[0].n });
      console.error(
        `${scenario}: ${figures.runsPerSecond.toFixed(1)} runs/s, p50 ${median(figures.latencies).toFixed(0)} ms, ` +
          `delivered meanwhile ${received - before}, still pending ${rows[0].n}`,
      );
    }
  }
} finally {
  await stop(proc);
  receiver.close();
  servers.kill();
  await db.close();
  await database.drop();
}

const summary = (scenario) => {
  const rounds = results[scenario];
  const all = rounds.flatMap((r) => r.latencies);
  return {
    runsPerSecond: round2(median(rounds.map((r) => r.runsPerSecond))),
    p50: Math.round(median(all)),
    p95: Math.round(
      percentile(
        [...all].sort((a, b) => a - b),
        95,
      ),
    ),
    delivered: Math.round(median(rounds.map((r) => r.delivered))),
    pendingAfter: Math.round(median(rounds.map((r) => r.pendingAfter))),
  };
};
const none = summary('none');
const slow = summary('slow');
console.log(JSON.stringify({ none, slow }, null, 2));

const body = `
## Notifications (\`npm run bench:notifications\`)

${provenance('npm run bench:notifications')}

${RUNS} runs of one tool call at once through a real \`mt serve\` (PostgreSQL, worker concurrency 8), ${ROUNDS} rounds
of each case alternated; the slow receiver answers each delivery after ${SLOW_MS} ms, with ${EVENTS} events queued as the
runs start (medians of the rounds; latencies over every run of the case):

| Case | Runs/s | Run p50 | Run p95 | Deliveries during the batch | Still pending at its end |
| --- | --- | --- | --- | --- | --- |
| no endpoint | ${none.runsPerSecond} | ${none.p50} ms | ${none.p95} ms | — | — |
| slow receiver, ${EVENTS} events | ${slow.runsPerSecond} | ${slow.p50} ms | ${slow.p95} ms | ${slow.delivered} | ${slow.pendingAfter} |

Aim: runs/s with the slow receiver at least 90% of runs/s with no endpoint: ${slow.runsPerSecond >= 0.9 * none.runsPerSecond ? 'met' : 'not met'}
(${Math.round((slow.runsPerSecond / none.runsPerSecond) * 100)}%). The delivery loop sends 8 at a time
(\`MT_WEBHOOK_CONCURRENCY\`), each holding no transaction and no run, so the receiver's backlog stays in
\`mt_webhook_deliveries\` while the runs go on; the runs' own cost of the outbox is one more CTE in the append of a
status change. Rounds on a shared machine differ by more than the two cases do.
`;
if (process.env.BENCH_WRITE !== '0') writeBenchSection('notifications', body);
