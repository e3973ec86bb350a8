// npm run bench:console — the web console's figures on a real `mt serve` on PostgreSQL: the runs list's server time
// with 10 000 runs in the namespace, the step-to-screen latency of one run's live steps with 50 viewers (SSE
// clients of /console/runs/{id}/live), a run page with 500 steps (its timeline), the overview page with 100 000 runs,
// and the bytes of JavaScript each page ships. Writes them into
// docs/performance.md between its markers (bench/lib/perf-doc.js). Needs a build (`npm run build`) and PostgreSQL at
// 127.0.0.1:5432 (MT_TEST_PG_URL); sends traffic only to 127.0.0.1.
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { appendRunEvents, openDatabase, overviewCharts } from '@maitento/store';
import pg from 'pg';
import { provenance, writeBenchSection } from './lib/perf-doc.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 10_000);
const LIST_REQUESTS = Number(process.env.BENCH_LIST_REQUESTS ?? 200);
const VIEWERS = Number(process.env.BENCH_VIEWERS ?? 50);
const STEPS = Number(process.env.BENCH_STEPS ?? 40);
const RUN_PAGE_STEPS = Number(process.env.BENCH_RUN_PAGE_STEPS ?? 500);
const RUN_PAGE_REQUESTS = Number(process.env.BENCH_RUN_PAGE_REQUESTS ?? 100);
const OVERVIEW_RUNS = Number(process.env.BENCH_OVERVIEW_RUNS ?? 100_000);
const OVERVIEW_REQUESTS = Number(process.env.BENCH_OVERVIEW_REQUESTS ?? 100);
const PG_URL = process.env.MT_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const root = fileURLToPath(new URL('..', import.meta.url));

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};
const ms = (v) => `${v.toFixed(1)} ms`;

async function withAdmin(fn) {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

async function startServe(env) {
  const child = spawn(process.execPath, [`${root}packages/cli/bin/mt.js`, 'serve', '--port', '0'], {
    env: { ...process.env, ...env, MT_LOG_LEVEL: 'error' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`mt serve did not start:\n${log}`)), 60_000);
    child.stderr.on('data', (c) => {
      log += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', () => reject(new Error(`mt serve exited:\n${log}`)));
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

/** Signs in like a browser: the form's CSRF cookie and token, then the session cookie. */
async function signIn(base, key) {
  const form = await fetch(`${base}/console/login`);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())[1];
  const res = await fetch(`${base}/console/login`, {
    method: 'POST',
    headers: {
      cookie: form.headers.get('set-cookie').split(';')[0],
      origin: base,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ _csrf: csrf, key }),
    redirect: 'manual',
  });
  return res.headers.get('set-cookie').split(';')[0];
}

const name = `mt_bench_console_${Date.now().toString(36)}`;
await withAdmin((c) => c.query(`CREATE DATABASE "${name}"`));
const dbUrl = new URL(PG_URL);
dbUrl.pathname = `/${name}`;
const key = `mt_bench_${randomBytes(16).toString('hex')}`;
const server = await startServe({
  DATABASE_URL: dbUrl.toString(),
  MT_SECRET_KEY: randomBytes(32).toString('hex'),
  MT_BOOTSTRAP_KEY: key,
  // The viewers are one signed-in key's streams: above the per-key default of 20 (MT_RUN_STREAMS_PER_KEY).
  MT_RUN_STREAMS_PER_KEY: String(VIEWERS + 10),
});
const db = await openDatabase({ databaseUrl: dbUrl.toString() });
try {
  const base = server.url;
  const cookie = await signIn(base, key);
  const get = async (path) => {
    const res = await fetch(`${base}${path}`, { headers: { cookie } });
    const text = await res.text();
    if (res.status !== 200) {
      const said = /role="alert"[^>]*>([\s\S]*?)<\/p>/.exec(text)?.[1] ?? text.slice(0, 300);
      throw new Error(`${path}: ${res.status} ${said}`);
    }
    return text;
  };

  // 1. 10 000 runs (rows as the engine stores them), three interactions, a few statuses, one per millisecond.
  await db.query(
    `INSERT INTO mt_runs (id, namespace, interaction, interaction_version, versions, inputs, status, result, created_at)
     SELECT gen_random_uuid(), 'default', 'flow-' || (i % 3), 1,
       jsonb_build_array(jsonb_build_object('kind', 'agent', 'name', 'agent-' || (i % 3), 'version', 1)),
       jsonb_build_object('message', 'run ' || i), (ARRAY['Completed','Failed','Running','Cancelled'])[1 + i % 4],
       repeat('result text ', 30), date_trunc('milliseconds', now()) - i * interval '1 millisecond'
     FROM generate_series(1, $1) AS i`,
    [RUNS],
  );
  const list = {};
  for (const [label, path] of [
    ['first page', '/console/runs'],
    ['status filter', '/console/runs?status=Failed'],
    ['agent filter', '/console/runs?agent=agent-1'],
  ]) {
    for (let i = 0; i < 20; i++) await get(path);
    const times = [];
    for (let i = 0; i < LIST_REQUESTS; i++) {
      const t = performance.now();
      await get(path);
      times.push(performance.now() - t);
    }
    list[label] = { p50: percentile(times, 50), p95: percentile(times, 95) };
  }

  // 2. Step-to-screen: 50 viewers of one running run; each step is appended as the engine appends it, and the
  //    time is taken when each viewer has read its row off the stream.
  const runId = randomUUID();
  await db.query(
    `INSERT INTO mt_runs (id, namespace, interaction, interaction_version, versions, inputs, status)
     VALUES ($1, 'default', 'flow-0', 1, '[]', '{}', 'Running')`,
    [runId],
  );
  const waiters = new Map();
  const viewers = [];
  for (let v = 0; v < VIEWERS; v++) {
    const res = await fetch(`${base}/console/runs/${runId}/live?after=0`, { headers: { cookie } });
    if (res.status !== 200) throw new Error(`viewer ${v}: ${res.status} ${await res.text()}`);
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    viewers.push(reader);
    (async () => {
      for (;;) {
        const { done, value } = await reader.read().catch(() => ({ done: true }));
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let cut = buffer.indexOf('\n\n');
        while (cut >= 0) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const id = /^id: (\d+)$/m.exec(frame)?.[1];
          if (id && /<li id="step-/.test(frame)) waiters.get(Number(id))?.(performance.now());
          cut = buffer.indexOf('\n\n');
        }
      }
    })();
  }
  await new Promise((r) => setTimeout(r, 500));
  const latencies = [];
  for (let seq = 1; seq <= STEPS; seq++) {
    const seen = [];
    const all = new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`step ${seq}: ${seen.length} of ${VIEWERS} viewers in 30 s`)),
        30_000,
      );
      waiters.set(seq, (at) => {
        seen.push(at);
        if (seen.length === VIEWERS) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    const t = performance.now();
    await appendRunEvents(db, runId, { statuses: ['Running'] }, [
      {
        type: 'model-response',
        data: {
          step: seq,
          text: `step ${seq}`,
          toolCalls: [],
          usage: {},
          durationMs: 1,
          model: 'bench',
          scripted: true,
        },
      },
    ]);
    await all;
    for (const at of seen) latencies.push(at - t);
    await new Promise((r) => setTimeout(r, 50));
  }
  for (const reader of viewers) await reader.cancel().catch(() => {});

  // 3. A run page with 500 steps (a turn, a call started, its result, over and over), ended: the whole page with
  //    its timeline, 100 requests after 10 of warm-up, one at a time.
  const bigRun = randomUUID();
  await db.query(
    `INSERT INTO mt_runs (id, namespace, interaction, interaction_version, versions, inputs, status)
     VALUES ($1, 'default', 'flow-0', 1, '[]', '{"message":"a long run"}', 'Running')`,
    [bigRun],
  );
  const big = [
    { type: 'run-started', data: { interaction: { name: 'flow-0', version: 1 }, versions: [], inputs: {} } },
  ];
  for (let step = 1; big.length < RUN_PAGE_STEPS - 1; step++) {
    const call = { toolCallId: `call-${step}`, index: 0, name: 'get-order' };
    big.push(
      {
        type: 'model-response',
        data: {
          step,
          text: `turn ${step}`,
          toolCalls: [{ id: call.toolCallId, name: 'get-order', arguments: { orderId: `A-${step}` } }],
          usage: { inputTokens: 100 + step, outputTokens: 20 },
          durationMs: 400,
          model: 'bench',
          scripted: true,
        },
      },
      { type: 'tool-call-started', data: { ...call, arguments: { orderId: `A-${step}` } } },
      {
        type: 'tool-result',
        data: { ...call, ok: true, status: 200, result: '{"status":"shipped"}', code: null, durationMs: 120 },
      },
    );
  }
  big.push({ type: 'run-completed', data: { result: 'done', scripted: true } });
  for (let at = 0; at < big.length; at += 100) {
    await appendRunEvents(db, bigRun, { statuses: ['Running'] }, big.slice(at, at + 100));
  }
  await db.query(`UPDATE mt_runs SET status = 'Completed', result = 'done' WHERE id = $1`, [bigRun]);
  for (let i = 0; i < 10; i++) await get(`/console/runs/${bigRun}`);
  const runPageTimes = [];
  for (let i = 0; i < RUN_PAGE_REQUESTS; i++) {
    const t = performance.now();
    await get(`/console/runs/${bigRun}`);
    runPageTimes.push(performance.now() - t);
  }

  // 5. The overview with 100 000 runs in the namespace: the rows beyond the list's spread over the last 7 days (one
  //    every 6 s), a few waiting for a person, a tenth failed with one of five codes.
  // In statements of 10 000 rows (each under the database's statement deadline).
  const [{ count: before }] = (await db.query('SELECT count(*)::int AS count FROM mt_runs')).rows;
  const extra = Math.max(0, OVERVIEW_RUNS - before);
  for (let from = 1; from <= extra; from += 10_000) {
    await db.query(
      `INSERT INTO mt_runs (id, namespace, interaction, interaction_version, versions, inputs, status, error_code, created_at, updated_at)
     SELECT gen_random_uuid(), 'default', 'flow-' || (i % 3), 1, '[]'::jsonb, '{}'::jsonb, s.status,
       CASE WHEN s.status = 'Failed' THEN 'api:bench:code-' || (i % 5) END, t.at, t.at
     FROM generate_series($1::int, $2::int) AS i,
       LATERAL (SELECT CASE WHEN i % 1000 = 0 THEN 'PendingApproval' WHEN i % 1000 = 1 THEN 'WaitingForInput'
         WHEN i % 10 = 2 THEN 'Failed' WHEN i % 10 = 3 THEN 'Cancelled' ELSE 'Completed' END AS status) AS s,
       LATERAL (SELECT now() - i * interval '6 seconds' AS at) AS t`,
      [from, Math.min(extra, from + 9_999)],
    );
  }
  await db.query('ANALYZE mt_runs');
  const [{ count: overviewRuns }] = (await db.query('SELECT count(*)::int AS count FROM mt_runs')).rows;
  for (let i = 0; i < 10; i++) await get('/console/overview');
  const overviewTimes = [];
  for (let i = 0; i < OVERVIEW_REQUESTS; i++) {
    const t = performance.now();
    await get('/console/overview');
    overviewTimes.push(performance.now() - t);
  }
  // The page counts its charts at most once a minute (decision 0356): what one count costs, on its own.
  const chartTimes = [];
  for (let i = 0; i < 10; i++) {
    const t = performance.now();
    await overviewCharts(db, 'default', {
      since7d: new Date(Date.now() - 168 * 3600_000).toISOString(),
      since24h: new Date(Date.now() - 24 * 3600_000).toISOString(),
    });
    chartTimes.push(performance.now() - t);
  }

  // 4. JavaScript per page: the scripts each page loads from /console/assets/, as sent and gzipped.
  const pages = {
    'sign-in': null,
    inbox: '/console/approvals',
    overview: '/console/overview',
    'runs list': '/console/runs',
    'running run': `/console/runs/${runId}`,
    resources: '/console/resources',
  };
  const js = {};
  for (const [label, path] of Object.entries(pages)) {
    const html = path === null ? await (await fetch(`${base}/console/login`)).text() : await get(path);
    let bytes = 0;
    let gzipped = 0;
    for (const [, src] of html.matchAll(/<script src="([^"]+)"/g)) {
      const text = await (await fetch(`${base}${src}`)).text();
      bytes += Buffer.byteLength(text);
      gzipped += gzipSync(text).length;
    }
    js[label] = { bytes, gzipped };
  }

  const stepP50 = percentile(latencies, 50);
  const stepP95 = percentile(latencies, 95);
  const section = `## The web console (\`npm run bench:console\`)

${provenance('npm run build && npm run bench:console')}

A real \`mt serve\` on PostgreSQL, measured from a client on the same machine. **Runs list with ${RUNS.toLocaleString('en')} runs in the namespace** (\`GET /console/runs\`, the whole HTML page of 50
rows, signed in; ${LIST_REQUESTS} requests after 20 of warm-up, one at a time). Aim: p95 under 150 ms. (A recursive
subquery had its statement costed past \`jit_above_cost\`: JIT compiling took 300-600 ms for 51 rows until it was split off.)

| Page | p50 | p95 |
| --- | --- | --- |
${Object.entries(list)
  .map(([label, t]) => `| ${label} | ${ms(t.p50)} | ${ms(t.p95)} |`)
  .join('\n')}

**Step to screen with ${VIEWERS} viewers of one run**: ${STEPS} steps appended as the engine appends them (one
statement, its \`run:<id>\` wake-up sent at commit); the time from the append to each viewer having read the step's
row off its \`/console/runs/{id}/live\` stream (${latencies.length} samples). p50 ${ms(stepP50)}, p95 ${ms(stepP95)}
(aim: p95 under 500 ms). A browser's swap of the row adds its own few milliseconds.

**A run page with ${RUN_PAGE_STEPS} steps** (\`GET /console/runs/{id}\`, an ended run of ${RUN_PAGE_STEPS} events: model
turns, calls and their results; the whole page with its timeline of ${Math.floor((RUN_PAGE_STEPS - 2) / 3) * 2} bars and its event log;
${RUN_PAGE_REQUESTS} requests after 10 of warm-up, one at a time): p50 ${ms(percentile(runPageTimes, 50))}, p95
${ms(percentile(runPageTimes, 95))} (aim: p95 under 300 ms).

**The overview with ${overviewRuns.toLocaleString('en')} runs in the namespace** (\`GET /console/overview\`, the whole page:
its charts (runs an hour by status over 24 h and 7 d, approval waits, tools, spend) and the waits, failures, approvals, deploys; runs spread over
7 days; ${OVERVIEW_REQUESTS} requests after 10 of warm-up, one at a time): p50 ${ms(percentile(overviewTimes, 50))}, p95
${ms(percentile(overviewTimes, 95))} (aim: p95 under 200 ms). Its charts are counted at most once a minute; one count
(\`overviewCharts\`, 10 of them): p50 ${ms(percentile(chartTimes, 50))}, max ${ms(Math.max(...chartTimes))}.

**JavaScript a page ships** (bytes, gzipped in brackets; aim: under 60 KB compressed): ${Object.entries(js)
    .map(([label, b]) =>
      b.bytes === 0 ? `${label} none` : `${label} ${b.bytes.toLocaleString('en')} (${b.gzipped.toLocaleString('en')})`,
    )
    .join('; ')}.`;
  writeBenchSection('console', section);
  console.log(section);
} finally {
  server.stop();
  await db.close();
  await new Promise((r) => setTimeout(r, 1000));
  await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}
