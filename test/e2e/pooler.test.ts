import { type PgBouncer, startPgBouncer } from '@maitento/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, type ApprovalView, type RunView } from './helpers/api.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';

// `mt serve` and `mt worker` through Debian's PgBouncer (docs/operations.md "Poolers"): DATABASE_URL names the
// pooler, MT_DIRECT_DATABASE_URL the PostgreSQL server itself (the wake-up LISTEN, the cache lease, migrations and
// set-up). PgBouncer runs as a managed service's does: no ignore_startup_parameters, no max_prepared_statements.

const forecastCalls = (stack: RunsStack, latitude: number) =>
  stack.upstream.requests.filter((r) => r.url.includes('/forecast') && r.url.includes(`latitude=${latitude}`));
const refundCalls = (stack: RunsStack, order: string) =>
  stack.upstream.requests.filter((r) => r.url.endsWith(`/${order}/refund`));

/** Starts `count` weather runs for London at once; all complete, and the upstream got exactly one call each. */
async function manyRuns(stack: RunsStack, count: number): Promise<void> {
  const before = forecastCalls(stack, 51.5).length;
  const started = await Promise.all(
    Array.from({ length: count }, () => stack.api.startRun('weather', { place: 'London' })),
  );
  for (const s of started) expect(s.status, JSON.stringify(s.body)).toBe(201);
  const ended = await Promise.all(started.map((s) => stack.api.waitForEnd(s.body.id, 30_000)));
  const statuses = ended.map((r: RunView) => r.status);
  expect(statuses, JSON.stringify(ended.filter((r) => r.status !== 'Completed'))).toEqual(
    Array.from({ length: count }, () => 'Completed'),
  );
  for (const run of ended) expect(run.result).toContain('21.5');
  expect(forecastCalls(stack, 51.5).length - before).toBe(count);
}

/** A refund run paused for approval, approved: how long from the approval's answer to the run's end (ms). */
async function approvedRefund(stack: RunsStack, order: string): Promise<number> {
  const started = await stack.api.startRun('support-desk', {
    message: `The lamp of order ${order} arrived broken, please refund it.`,
  });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const paused = await stack.api.waitForRun(started.body.id, (r) => r.status !== 'Running');
  expect(paused.status, JSON.stringify(paused)).toBe('PendingApproval');
  const approval = paused.pendingApproval as ApprovalView;
  const at = performance.now();
  const approved = await stack.api.request('POST', `/v1/approvals/${approval.id}/approve`, {});
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  // Polled every 20 ms: the run ends once the worker, woken by the approval's notification, made the call.
  const done = await stack.api.waitForRun(
    started.body.id,
    (r) => r.status !== 'PendingApproval' && r.status !== 'Running',
  );
  const took = performance.now() - at;
  expect(done.status, JSON.stringify(done)).toBe('Completed');
  expect(refundCalls(stack, order)).toHaveLength(1);
  return took;
}

/** PgBouncer's server connections in transaction mode. */
const POOL_SIZE = 8;

describe('through PgBouncer in transaction mode', { timeout: 60_000 }, () => {
  let bouncer: PgBouncer;
  let stack: RunsStack;

  beforeAll(async () => {
    bouncer = await startPgBouncer({ mode: 'transaction', poolSize: POOL_SIZE });
    stack = await startRunsStack({
      servers: 2,
      workers: 1,
      databaseUrl: (url) => bouncer.through(url),
      databaseEnv: (url) => ({ MT_DIRECT_DATABASE_URL: url }),
    });
  }, 60_000);

  afterAll(async () => {
    if (process.env.MT_E2E_LOGS) console.error(`--- pgbouncer\n${bouncer?.log()}`);
    await stack?.close();
    await bouncer?.stop();
  });

  it('completes 30 runs started at once, each with its one tool call, with no prepared-statement collision', async () => {
    // PostgreSQL's own connections to the database meanwhile: the pooler's (at most POOL_SIZE) and one wake-up
    // connection a process (3), whatever the processes' pools hold (up to 3 × MT_DB_POOL_MAX of the pooler's clients).
    const counter = new pg.Client({ connectionString: stack.db!.url });
    await counter.connect();
    // The migrations' direct connections of the processes' start close a second after (at most 5 s here).
    const until = Date.now() + 5000;
    const starting = async () =>
      (await counter.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE '%-direct'"))
        .rows[0].n;
    while ((await starting()) > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await starting()).toBe(0);
    let most = 0;
    let counting = true;
    const sampling = (async () => {
      while (counting) {
        const { rows } = await counter.query(
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
        );
        most = Math.max(most, rows[0].n);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })();
    try {
      await manyRuns(stack, 30);
    } finally {
      counting = false;
      await sampling;
      await counter.end();
    }
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(POOL_SIZE + 3);
    const logs = [...stack.servers, ...stack.workers].map((p) => p.log()).join('\n');
    expect(logs).not.toMatch(/prepared statement|42P05|26000|unsupported startup parameter/);
  });

  it('wakes an approved run at once (the wake-up LISTEN on the direct connection), and calls the upstream once', async () => {
    // Without its wake-up the worker would find each approval at its next poll (FETCH_POLL_MS, 2 s): four in a row
    // within 1 s each would then be luck (about 1 in 60).
    const took: number[] = [];
    for (const order of ['P-1001', 'P-1002', 'P-1003', 'P-1004']) took.push(await approvedRefund(stack, order));
    expect(Math.max(...took), took.join(', ')).toBeLessThan(1000);
    for (const server of stack.servers) {
      const health = await fetch(`${server.url}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'ok', wakeups: { listening: true } });
    }
  });

  it('refuses a key deleted through one server on the next call to the other (the cache lease on the direct connection)', async () => {
    const [a, b] = stack.servers.map((s) => s.url);
    const created = await stack.api.request<{ id: string; key: string }>('POST', '/v1/keys', {
      role: 'admin',
      name: 'pooled',
    });
    expect(created.status).toBe(201);
    const call = (url: string, order: string) =>
      api(url, created.body.key).request('POST', '/v1/extops/get-order/call', {
        arguments: { additionalInputs: { 'path.orderId': order } },
      });
    expect((await call(b, 'Q-1')).status).toBe(200);
    expect((await api(a, stack.adminKey).request('DELETE', `/v1/keys/${created.body.id}`)).status).toBe(204);
    const refused = await call(b, 'Q-2');
    expect([refused.status, refused.body.code]).toEqual([401, 'api:auth:invalid-key']);
  });
});

describe('through PgBouncer in session mode', { timeout: 60_000 }, () => {
  let bouncer: PgBouncer;
  let stack: RunsStack;

  beforeAll(async () => {
    bouncer = await startPgBouncer({ mode: 'session', poolSize: 40 });
    stack = await startRunsStack({
      servers: 1,
      workers: 1,
      databaseUrl: (url) => bouncer.through(url),
      databaseEnv: (url) => ({ MT_DIRECT_DATABASE_URL: url }),
    });
  }, 60_000);

  afterAll(async () => {
    await stack?.close();
    await bouncer?.stop();
  });

  it('completes 10 runs at once and an approved refund', async () => {
    await manyRuns(stack, 10);
    expect(await approvedRefund(stack, 'S-1001')).toBeLessThan(1500);
  });
});
