// npm run bench:console — the web console's figures on a real `mt serve` on PostgreSQL: the runs list's server time
// with 10 000 runs in the namespace, the step-to-screen latency of one run's live steps with 50 viewers (SSE
// clients of /console/runs/{id}/live), and the bytes of JavaScript each page ships. Writes them into
// docs/performance.md between its markers (bench/lib/perf-doc.js). Needs a build (`npm run build`) and PostgreSQL at
// 127.0.0.1:5432 (MT_TEST_PG_URL); sends traffic only to 127.0.0.1.
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { appendRunEvents, openDatabase } from '@maitento/store';
import pg from 'pg';
import { provenance, writeBenchSection } from './lib/perf-doc.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 10_000);
const LIST_REQUESTS = Number(process.env.BENCH_LIST_REQUESTS ?? 200);
const VIEWERS = Number(process.env.BENCH_VIEWERS ?? 50);
const STEPS = Number(process.env.BENCH_STEPS ?? 40);
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
});
const db = await openDatabase({ databaseUrl: dbUrl.toString() });
try {
  const base = server.url;
  const cookie = await signIn(base, key);
  const get = async (path) => {
    const res = await fetch(`${base}${path}`, { headers: { cookie } });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${text.slice(0, 300)}`);
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
    const all = new Promise((resolve) => {
      waiters.set(seq, (at) => {
        seen.push(at);
        if (seen.length === VIEWERS) resolve();
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

  // 3. JavaScript per page: the scripts each page loads from /console/assets/.
  const pages = {
    'sign-in': null,
    inbox: '/console/approvals',
    'runs list': '/console/runs',
    'running run': `/console/runs/${runId}`,
    resources: '/console/resources',
  };
  const js = {};
  for (const [label, path] of Object.entries(pages)) {
    const html = path === null ? await (await fetch(`${base}/console/login`)).text() : await get(path);
    let bytes = 0;
    for (const [, src] of html.matchAll(/<script src="([^"]+)"/g)) {
      bytes += Buffer.byteLength(await (await fetch(`${base}${src}`)).text());
    }
    js[label] = bytes;
  }

  const stepP50 = percentile(latencies, 50);
  const stepP95 = percentile(latencies, 95);
  const section = `## The web console (\`npm run bench:console\`)

${provenance('npm run build && npm run bench:console')}

A real \`mt serve\` on PostgreSQL, measured from a client on the same machine.

**Runs list with ${RUNS.toLocaleString('en')} runs in the namespace** (\`GET /console/runs\`, the whole HTML page of 50
rows, signed in; ${LIST_REQUESTS} requests after 20 of warm-up, one at a time). Aim: p95 under 150 ms.

| Page | p50 | p95 |
| --- | --- | --- |
${Object.entries(list)
  .map(([label, t]) => `| ${label} | ${ms(t.p50)} | ${ms(t.p95)} |`)
  .join('\n')}

**Step to screen with ${VIEWERS} viewers of one run**: ${STEPS} steps appended as the engine appends them (one
statement, its \`run:<id>\` wake-up sent at commit); the time from the append to each viewer having read the step's
row off its \`/console/runs/{id}/live\` stream (${latencies.length} samples). p50 ${ms(stepP50)}, p95 ${ms(stepP95)}
(aim: p95 under 500 ms). A browser's swap of the row adds its own few milliseconds.

**JavaScript a page ships** (bytes, before compression):

| Page | JavaScript |
| --- | --- |
${Object.entries(js)
  .map(([label, b]) => `| ${label} | ${b === 0 ? 'none' : `${b.toLocaleString('en')} bytes`} |`)
  .join('\n')}`;
  writeBenchSection('console', section);
  console.log(section);
} finally {
  server.stop();
  await db.close();
  await new Promise((r) => setTimeout(r, 1000));
  await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}
