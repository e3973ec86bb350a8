import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker, type WorkerProcess } from './helpers/processes.js';
import { runMt } from './support/harness.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';

// Prometheus metrics (docs/operations.md, "Metrics"): the real `mt serve` and `mt worker` with MT_METRICS_PORT serve
// GET /metrics on a port of their own; what they serve is parsed with a Prometheus text-format parser.
let stack: RunsStack;
let worker: WorkerProcess | undefined;

interface Sample {
  labels?: Record<string, string>;
  value?: string;
  buckets?: Record<string, string>;
  count?: string;
  sum?: string;
}
interface Family {
  name: string;
  type: string;
  help: string;
  metrics: Sample[];
}

beforeAll(async () => {
  stack = await startRunsStack({ servers: 1, env: { MT_METRICS_PORT: '0' } });
}, 90_000);

afterAll(async () => {
  await worker?.stop();
  await stack?.close();
});

/** The metrics URL a process logged when it started (`metrics at http://...`), its port chosen by the system. */
async function metricsUrl(log: () => string): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const match = /metrics at (http:\/\/[0-9.:]+\/metrics)/.exec(log());
    if (match) return match[1];
    if (Date.now() > deadline) throw new Error(`no metrics URL in the log:\n${log()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Whether promtool (Prometheus's checker, in Debian's prometheus package) is installed. */
function promtool(): boolean {
  return spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0;
}

async function scrape(url: string): Promise<{ families: Map<string, Family>; ms: number; text: string }> {
  const started = performance.now();
  const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  const ms = performance.now() - started;
  expect(res.status, text).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  const families = new Map((parsePrometheusTextFormat(text) as Family[]).map((f) => [f.name, f]));
  return { families, ms, text };
}

function family(families: Map<string, Family>, name: string, type: string): Family {
  const found = families.get(name);
  expect(found, `${name} is served`).toBeDefined();
  expect(found!.type).toBe(type.toUpperCase());
  return found!;
}

function sample(f: Family, labels: Record<string, string>): Sample | undefined {
  return f.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
}

/**
 * One series of histogram `name`, the one whose labels include `labels`. The parser folds every series of a histogram
 * into one and drops their `_count` and `_sum` when they have labels, so the series' own lines are parsed alone, their
 * labels but `le` taken off (and checked to be one series).
 */
function series(text: string, name: string, labels: Record<string, string>): Sample | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const lines = text.split('\n').filter((l) => /^[a-z_]+\{/.test(l) && l.startsWith(`${name}_`));
  const own = lines.filter((l) => wanted.every((w) => l.slice(l.indexOf('{'), l.indexOf('}')).includes(w)));
  if (own.length === 0) return undefined;
  const labelsOf = (l: string) => l.slice(l.indexOf('{') + 1, l.indexOf('}')).split(',');
  const identity = new Set(
    own.map((l) =>
      labelsOf(l)
        .filter((p) => !p.startsWith('le='))
        .join(','),
    ),
  );
  expect([...identity], 'the labels name one series').toHaveLength(1);
  // Buckets first: the parser fails on a `_count` before them (the order the exporter writes).
  const ordered = [
    ...own.filter((l) => l.startsWith(`${name}_bucket`)),
    ...own.filter((l) => !l.startsWith(`${name}_bucket`)),
  ];
  const bare = ordered.map((l) => {
    const le = labelsOf(l).filter((p) => p.startsWith('le='));
    return `${l.slice(0, l.indexOf('{'))}${le.length ? `{${le.join(',')}}` : ''}${l.slice(l.indexOf('}') + 1)}`;
  });
  const [parsed] = parsePrometheusTextFormat([`# TYPE ${name} histogram`, ...bare, ''].join('\n')) as Family[];
  const first = labelsOf(own[0]).filter((p) => !p.startsWith('le='));
  return {
    ...parsed.metrics[0],
    labels: Object.fromEntries(first.map((p) => [p.slice(0, p.indexOf('=')), JSON.parse(p.slice(p.indexOf('=') + 1))])),
  };
}

describe('metrics', { timeout: 90_000 }, () => {
  it('mt serve serves the runs, tool calls, waits, queue, HTTP, pool and lease series after real runs', async () => {
    const url = await metricsUrl(() => stack.servers[0].log());
    // A completed run with one tool call, a run waiting for a person, and a request to no route.
    const weather = await stack.api.startRun('weather', { place: 'London' });
    expect((await stack.api.waitForEnd(weather.body.id)).status).toBe('Completed');
    const refund = await stack.api.startRun('support-desk', {
      message: 'The lamp of order A-1001 arrived broken, please refund it.',
    });
    await stack.api.waitForRun(refund.body.id, (r) => r.status === 'PendingApproval');
    expect((await stack.api.request('GET', '/v1/no-such-route')).status).toBe(404);
    await new Promise((r) => setTimeout(r, 1100));

    const { families, ms, text } = await scrape(url);
    expect(ms).toBeLessThan(1000);

    const started = family(families, 'mt_runs_started_total', 'counter');
    expect(Number(started.metrics[0].value)).toBe(2);
    const ended = family(families, 'mt_runs_ended_total', 'counter');
    expect(Number(sample(ended, { status: 'Completed' })?.value)).toBe(1);

    family(families, 'mt_tool_call_duration_seconds', 'histogram');
    const calls = (labels: Record<string, string>) => series(text, 'mt_tool_call_duration_seconds', labels);
    const weatherCall = calls({ tool: 'current-weather', outcome: 'ok' });
    expect(Number(weatherCall?.count)).toBe(1);
    expect(Number(weatherCall?.sum)).toBeGreaterThan(0);
    // get-order of the support run was called too (it needs no approval); the refund waits, uncalled.
    expect(Number(weatherCall?.buckets?.['+Inf'])).toBe(1);
    expect(Number(calls({ tool: 'get-order', outcome: 'ok' })?.count)).toBe(1);
    expect(calls({ tool: 'refund-order' })).toBeUndefined();

    const waiting = family(families, 'mt_runs_waiting', 'gauge');
    expect(Number(sample(waiting, { status: 'PendingApproval' })?.value)).toBe(1);
    expect(Number(sample(waiting, { status: 'WaitingForInput' })?.value)).toBe(0);
    expect(Number(sample(waiting, { status: 'PendingAuthorization' })?.value)).toBe(0);
    expect(Number(sample(waiting, { status: 'PendingBudget' })?.value)).toBe(0);
    expect(Number(sample(waiting, { status: 'PendingLimit' })?.value)).toBe(0);
    const oldest = family(families, 'mt_runs_waiting_oldest_seconds', 'gauge');
    const waited = Number(sample(oldest, { status: 'PendingApproval' })?.value);
    expect(waited).toBeGreaterThan(1);
    expect(waited).toBeLessThan(60);
    expect(Number(family(families, 'mt_runs_queued', 'gauge').metrics[0].value)).toBe(0);
    expect(Number(family(families, 'mt_runs_queued_oldest_seconds', 'gauge').metrics[0].value)).toBe(0);
    expect(Number(family(families, 'mt_metrics_database_up', 'gauge').metrics[0].value)).toBe(1);

    family(families, 'mt_http_request_duration_seconds', 'histogram');
    const http = (labels: Record<string, string>) => series(text, 'mt_http_request_duration_seconds', labels);
    const starts = http({ route: '/v1/interactions/:name/runs' });
    expect([starts?.labels?.method, starts?.labels?.status, Number(starts?.count)]).toEqual(['POST', '201', 2]);
    expect(Number(http({ route: 'unmatched', status: '404' })?.count)).toBe(1);
    const runReads = http({ route: '/v1/runs/:id', method: 'GET', status: '200' });
    expect(Number(runReads?.count)).toBeGreaterThan(0);
    expect(Number(runReads?.buckets?.['+Inf'])).toBe(Number(runReads?.count));

    const pool = family(families, 'mt_db_pool_connections', 'gauge');
    expect(Number(sample(pool, { state: 'used' })?.value)).toBeGreaterThanOrEqual(0);
    expect(Number(sample(pool, { state: 'idle' })?.value)).toBeGreaterThan(0);
    expect(Number(family(families, 'mt_db_pool_waiting', 'gauge').metrics[0].value)).toBe(0);
    expect(Number(family(families, 'mt_db_pool_max', 'gauge').metrics[0].value)).toBeGreaterThan(0);
    const lease = family(families, 'mt_cache_lease_mode', 'gauge');
    expect(lease.metrics.map((m) => [m.labels?.mode, Number(m.value)]).sort()).toEqual(
      [
        ['live', 1],
        ['off', 0],
        ['read-through', 0],
      ].sort(),
    );

    // Every series the example alert rules and dashboard of deploy/ name is one mt serve serves.
    const deploy = ['prometheus/maitento-alerts.yaml', 'grafana/maitento-dashboard.json'].map((f) =>
      readFileSync(fileURLToPath(new URL(`../../deploy/${f}`, import.meta.url)), 'utf8'),
    );
    const named = new Set(deploy.flatMap((text) => text.match(/\bmt_[a-z_]+/g) ?? []));
    expect(named.size).toBeGreaterThan(8);
    for (const name of named) {
      const base = name.replace(/_(bucket|count|sum)$/, '');
      expect(families.has(name) || families.get(base)?.type === 'HISTOGRAM', `${name} is served`).toBe(true);
    }

    // Prometheus's own linter, where Debian's prometheus package put it (CI installs it).
    if (promtool()) {
      const linted = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 30_000 });
      expect([linted.status, linted.stdout + linted.stderr]).toEqual([0, '']);
    }

    // The approved refund is called and the run ends: the counters move.
    expect((await stack.api.request('POST', `/v1/runs/${refund.body.id}/approve`, {})).status).toBe(200);
    expect((await stack.api.waitForEnd(refund.body.id)).status).toBe('Completed');
    const { families: after, text: afterText } = await scrape(url);
    expect(Number(sample(family(after, 'mt_runs_ended_total', 'counter'), { status: 'Completed' })?.value)).toBe(2);
    const refunds = series(afterText, 'mt_tool_call_duration_seconds', { tool: 'refund-order' });
    expect([refunds?.labels?.outcome, Number(refunds?.count)]).toEqual(['ok', 1]);
    expect(Number(sample(family(after, 'mt_runs_waiting', 'gauge'), { status: 'PendingApproval' })?.value)).toBe(0);
  });

  it('answers within its deadline while the database does not, saying the database figures are not fresh', async () => {
    const url = await metricsUrl(() => stack.servers[0].log());
    const holder = new pg.Client({ connectionString: stack.db!.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE mt_runs IN ACCESS EXCLUSIVE MODE');
      const { families, ms } = await scrape(url);
      expect(ms).toBeLessThan(2000);
      expect(Number(family(families, 'mt_metrics_database_up', 'gauge').metrics[0].value)).toBe(0);
      // The gauges read from the database keep the last values read (the first test's end: nothing waits).
      const waiting = family(families, 'mt_runs_waiting', 'gauge');
      expect(Number(sample(waiting, { status: 'PendingApproval' })?.value)).toBe(0);
      // What the process knows without the database is still there.
      expect(Number(family(families, 'mt_runs_started_total', 'counter').metrics[0].value)).toBeGreaterThan(0);
      expect(families.has('mt_db_pool_connections')).toBe(true);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    const { families } = await scrape(url);
    expect(Number(family(families, 'mt_metrics_database_up', 'gauge').metrics[0].value)).toBe(1);
  });

  it('mt worker serves its metrics on a port of its own: the database, pool and lease series, no HTTP ones', async () => {
    // The server keeps executing runs too; the worker's counters count only what it executed.
    worker = await startWorker(stack.home, { ...stack.env, MT_METRICS_PORT: '0' });
    const url = await metricsUrl(() => worker!.log());
    const { families } = await scrape(url);
    expect(Number(family(families, 'mt_metrics_database_up', 'gauge').metrics[0].value)).toBe(1);
    expect(families.has('mt_runs_waiting')).toBe(true);
    expect(families.get('mt_http_request_duration_seconds')?.metrics ?? []).toEqual([]);
    const lease = family(families, 'mt_cache_lease_mode', 'gauge');
    expect(Number(sample(lease, { mode: 'live' })?.value)).toBe(1);
    expect(Number(family(families, 'mt_db_pool_max', 'gauge').metrics[0].value)).toBeGreaterThan(0);
    expect((await fetch(url.replace('/metrics', '/other'))).status).toBe(404);
  });

  it('a setting that is not a port stops mt serve and mt worker at start, with a clear code', async () => {
    for (const command of ['serve', 'worker']) {
      const refused = await runMt([command, ...(command === 'serve' ? ['--port', '0'] : [])], {
        home: stack.home,
        env: { ...stack.env, MT_METRICS_PORT: '94x64' },
      });
      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.stderr).toContain('api:metrics:port-invalid');
      expect(refused.stderr).toContain('"94x64"');
    }
  });
});
