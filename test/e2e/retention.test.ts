import { openDatabase, type PruneResult, startRetention } from '@maitento/store';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultUpstreamAnswer } from './helpers/upstream.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';
import { runMt } from './support/harness.js';

// Data lifecycle (docs/operations.md, "Data lifecycle"): the retention job deletes ended runs in short batches
// while a real `mt serve` keeps running runs on the same database; `mt runs-prune` does the same on demand.
let stack: RunsStack;
let client: pg.Client;
const DAY = 86_400_000;
const CLONES = 2000;
const TABLES = ['mt_runs', 'mt_run_events', 'mt_approvals'] as const;

beforeAll(async () => {
  stack = await startRunsStack({ servers: 1 });
  client = new pg.Client({ connectionString: stack.db!.url });
  await client.connect();
}, 90_000);

afterAll(async () => {
  await client?.end();
  await stack?.close();
});

async function sizes(): Promise<Record<string, number>> {
  const { rows } = await client.query<{ name: string; bytes: string }>(
    'SELECT t AS name, pg_total_relation_size(t::regclass) AS bytes FROM unnest($1::text[]) t',
    [TABLES],
  );
  return Object.fromEntries(rows.map((r) => [r.name, Number(r.bytes)]));
}

async function columns(table: string): Promise<string[]> {
  const { rows } = await client.query<{ c: string }>(
    'SELECT column_name AS c FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position',
    [table],
  );
  return rows.map((r) => r.c);
}

/**
 * Copies the given real runs `count` times, round robin, with everything they wrote (the run row, its events, its
 * approvals) under new ids: what `count` such runs would have written. The copies started 1 ms apart before now.
 */
async function cloneRuns(sources: string[], count: number): Promise<string[]> {
  await client.query(
    'CREATE TEMP TABLE clone_map AS SELECT gen_random_uuid() AS id, s.id AS src, g FROM generate_series(1, $2::int) g ' +
      'JOIN (SELECT id, row_number() OVER (ORDER BY id) - 1 AS i FROM mt_runs WHERE id = ANY($1::uuid[])) s ' +
      'ON s.i = g % cardinality($1::uuid[])',
    [sources, count],
  );
  const swap = (cols: string[], replace: Record<string, string>, alias: string) =>
    cols.map((c) => replace[c] ?? `${alias}.${c}`).join(', ');
  const runCols = await columns('mt_runs');
  const at = "date_trunc('milliseconds', now()) - m.g * interval '1 millisecond'";
  await client.query(
    `INSERT INTO mt_runs (${runCols.join(', ')}) SELECT ${swap(runCols, { id: 'm.id', created_at: at, updated_at: at }, 'r')} ` +
      'FROM mt_runs r JOIN clone_map m ON m.src = r.id',
  );
  const eventCols = await columns('mt_run_events');
  await client.query(
    `INSERT INTO mt_run_events (${eventCols.join(', ')}) SELECT ${swap(eventCols, { run_id: 'm.id' }, 'e')} ` +
      'FROM mt_run_events e JOIN clone_map m ON m.src = e.run_id',
  );
  const approvalCols = await columns('mt_approvals');
  await client.query(
    `INSERT INTO mt_approvals (${approvalCols.join(', ')}) ` +
      `SELECT ${swap(approvalCols, { id: 'gen_random_uuid()', run_id: 'm.id' }, 'a')} ` +
      'FROM mt_approvals a JOIN clone_map m ON m.src = a.run_id',
  );
  const { rows } = await client.query<{ id: string }>('SELECT id FROM clone_map ORDER BY g');
  await client.query('DROP TABLE clone_map');
  return rows.map((r) => r.id);
}

describe('retention', { timeout: 120_000 }, () => {
  it('deletes ended runs older than the retention in short batches while real runs go on, never a running or waiting tree', async () => {
    // Real runs: a weather run (one tool call) and a support run with an approved refund (an approval row).
    const weather = await stack.api.startRun('weather', { place: 'London' });
    expect((await stack.api.waitForEnd(weather.body.id)).status).toBe('Completed');
    const refund = await stack.api.startRun('support-desk', {
      message: 'The lamp of order A-1001 arrived broken, please refund it.',
    });
    await stack.api.waitForRun(refund.body.id, (r) => r.status === 'PendingApproval');
    expect((await stack.api.request('POST', `/v1/runs/${refund.body.id}/approve`, {})).status).toBe(200);
    expect((await stack.api.waitForEnd(refund.body.id)).status).toBe('Completed');
    const sources = [weather.body.id, refund.body.id];

    await client.query('VACUUM ANALYZE mt_runs, mt_run_events, mt_approvals');
    const before = await sizes();
    const clones = await cloneRuns(sources, CLONES);
    await client.query('VACUUM ANALYZE mt_runs, mt_run_events, mt_approvals');
    const filled = await sizes();
    const events = await client.query<{ n: string }>(
      'SELECT count(*)::float / NULLIF(count(DISTINCT run_id), 0) AS n FROM mt_run_events WHERE run_id = ANY($1::uuid[])',
      [sources],
    );
    const perThousand = Object.fromEntries(TABLES.map((t) => [t, ((filled[t] - before[t]) * 1000) / CLONES]));

    // Old ones that must stay: a run still Running, one waiting for a person, one waiting for a message, and an
    // ended top run whose child still runs. An ended tree goes whole: its ended child with it.
    const [running, pending, waitingInput, parentOfRunning, runningChild, parentOfEnded, endedChild] = clones;
    await client.query("UPDATE mt_runs SET status = 'Running' WHERE id = $1", [running]);
    await client.query("UPDATE mt_runs SET status = 'PendingApproval' WHERE id = $1", [pending]);
    await client.query("UPDATE mt_runs SET status = 'WaitingForInput' WHERE id = $1", [waitingInput]);
    await client.query(
      "UPDATE mt_runs SET parent_run_id = $1, parent_step = 1, parent_call_index = 0, depth = 1, status = 'Running' WHERE id = $2",
      [parentOfRunning, runningChild],
    );
    await client.query(
      'UPDATE mt_runs SET parent_run_id = $1, parent_step = 1, parent_call_index = 0, depth = 1 WHERE id = $2',
      [parentOfEnded, endedChild],
    );
    const kept = [running, pending, waitingInput, parentOfRunning, runningChild];

    // Everything above started before the cutoff: the injected clock is one day past this instant, and the
    // retention one day.
    await new Promise((r) => setTimeout(r, 20));
    const cutoff = Date.now();
    await new Promise((r) => setTimeout(r, 20));

    // A real run started now holds its tool call at the upstream until the job has deleted 500 runs: it is in
    // flight during the pruning, and completes while the job goes on.
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    stack.upstream.setHandler(async (request, res) => {
      if (request.url.includes('latitude=48.85')) await released;
      defaultUpstreamAnswer(request, res);
    });
    const during = await stack.api.startRun('weather', { place: 'Paris' });
    expect(during.status).toBe(201);
    await stack.upstream.waitFor((r) => r.url.includes('latitude=48.85'));

    // The job's own connections, named so another connection can watch its transactions.
    const url = new URL(stack.db!.url);
    url.searchParams.set('application_name', 'mt-retention-test');
    const db = await openDatabase({ databaseUrl: url.toString() });
    const total = (await client.query<{ n: string }>('SELECT count(*) AS n FROM mt_runs')).rows[0].n;
    let longestObservedMs = 0;
    let samples = 0;
    let watching = true;
    let later: Promise<string> | undefined;
    let deletedAtRelease = 0;
    // From another connection: the age of the job's open transaction, every few milliseconds, and the runs left.
    const watcher = (async () => {
      while (watching) {
        const { rows } = await client.query<{ age: number | null; left: string }>(
          "SELECT (SELECT max(extract(epoch FROM clock_timestamp() - xact_start)) * 1000 FROM pg_stat_activity WHERE application_name = 'mt-retention-test' AND xact_start IS NOT NULL) AS age, " +
            '(SELECT count(*) FROM mt_runs) AS left',
        );
        samples++;
        longestObservedMs = Math.max(longestObservedMs, rows[0].age ?? 0);
        if (Number(total) - Number(rows[0].left) >= 500 && later === undefined) {
          deletedAtRelease = Number(total) - Number(rows[0].left);
          release();
          // And one more run starts and ends while the job deletes.
          later = stack.api.startRun('weather', { place: 'Tokyo' }).then(async (s) => {
            expect((await stack.api.waitForEnd(s.body.id)).status).toBe('Completed');
            return s.body.id;
          });
        }
        await new Promise((r) => setTimeout(r, 2));
      }
    })();

    const batches: number[] = [];
    let passed!: (result: PruneResult) => void;
    const pass = new Promise<PruneResult>((r) => {
      passed = r;
    });
    // Two audit rows of a year ago: one past the audit retention (365 days), one not.
    await client.query(
      'INSERT INTO mt_audit (at, namespace, actor_kind, actor_id, via, action, target_kind, target_id) ' +
        "SELECT now() - make_interval(days => d), 'default', 'system', 'system', 'migrate', 'schema.migrated', " +
        "'schema', d::text FROM unnest(ARRAY[400, 300]) d",
    );
    const retention = startRetention({
      db,
      retentionMs: DAY,
      auditRetentionMs: 365 * DAY,
      now: () => cutoff + DAY,
      firstDelayMs: 0,
      intervalMs: 3_600_000,
      batchSize: 100,
      onPass: passed,
    });
    const result = await pass;
    const laterId = await later;
    watching = false;
    await watcher;
    await retention.close();
    await db.close();
    stack.upstream.setHandler(defaultUpstreamAnswer);
    batches.push(result.batches);

    // The runs in flight during the pruning completed, and are kept (they started after the cutoff).
    const duringRun = await stack.api.waitForEnd(during.body.id);
    expect(duringRun.status).toBe('Completed');
    expect(duringRun.result).toContain('Weather report:');
    expect(laterId).toBeDefined();
    // The held call was let go while the job had more to delete: the run went on while the job deleted.
    expect(deletedAtRelease).toBeGreaterThanOrEqual(500);
    expect(deletedAtRelease).toBeLessThan(result.runs);

    // What is left: the kept old runs and the runs started after the cutoff, nothing else; the deleted runs'
    // events and approvals went with them.
    const left = await client.query<{ id: string }>('SELECT id FROM mt_runs');
    expect(new Set(left.rows.map((r) => r.id))).toEqual(new Set([...kept, during.body.id, laterId!]));
    const orphans = await client.query<{ n: string }>(
      'SELECT (SELECT count(*) FROM mt_run_events WHERE run_id <> ALL($1::uuid[])) + ' +
        '(SELECT count(*) FROM mt_approvals WHERE run_id IS NOT NULL AND run_id <> ALL($1::uuid[])) AS n',
      [left.rows.map((r) => r.id)],
    );
    expect(Number(orphans.rows[0].n)).toBe(0);
    // Every top run (the copies and their two sources) but the 4 kept ones, one delete each; the two copies made
    // children are no top runs (one kept, one deleted with its parent).
    expect(result.runs).toBe(CLONES + sources.length - 4 - 2);
    // Each batch that deleted runs wrote its audit row, as the system's retention job, in its own transaction.
    const audited = await client.query<{ runs: number; actor_id: string; via: string }>(
      "SELECT (after->>'runs')::int AS runs, actor_id, via FROM mt_audit WHERE action = 'runs.pruned'",
    );
    expect(audited.rows.reduce((sum, row) => sum + row.runs, 0)).toBe(result.runs);
    expect(audited.rows.every((row) => row.actor_id === 'system' && row.via === 'retention')).toBe(true);
    // The audit row past MT_AUDIT_RETENTION_DAYS went; the younger one and today's stay.
    expect(result.auditRows).toBe(1);
    const old = await client.query<{ target_id: string }>(
      "SELECT target_id FROM mt_audit WHERE at < now() - interval '200 days'",
    );
    expect(old.rows).toEqual([{ target_id: '300' }]);
    expect(result.batches).toBeGreaterThan(10);
    // No transaction of the job lasted 100 ms, as the database sees it from another connection: the age of the job's
    // open transaction (a batch is one statement, its own transaction, so its locks are held only while it is open),
    // sampled every few ms. The job's own timing of a batch, from sending to answer, adds this process's delays (its
    // event loop, the scheduler of a loaded 2-core machine: 143 ms seen once in CI with the locks short); it is held
    // to a looser bound that still catches batches that stopped being small (one batch of 200 runs took 107 ms at
    // load 12 before decision 0251, the whole pass in one transaction takes seconds).
    expect(samples).toBeGreaterThan(10);
    expect(longestObservedMs).toBeLessThan(100);
    expect(result.longestBatchMs).toBeLessThan(250);

    const pruned = await sizes();
    await client.query('VACUUM mt_runs, mt_run_events, mt_approvals');
    const vacuumed = await sizes();
    // The figures of docs/operations.md ("Data lifecycle"), printed for the record.
    console.log(
      JSON.stringify({
        bytesPer1000Runs: perThousand,
        eventsPerSourceRun: Number(events.rows[0].n),
        before,
        filled,
        pruned,
        vacuumed,
        prune: result,
        longestObservedMs,
        samples,
        deletedAtRelease,
      }),
    );
  });

  it('mt runs-prune deletes what ended before a date and refuses a date that is not one', async () => {
    const run = await stack.api.startRun('weather', { place: 'London' });
    expect((await stack.api.waitForEnd(run.body.id)).status).toBe('Completed');
    const mt = (args: string[]) => runMt(args, { home: stack.home, env: { DATABASE_URL: stack.db!.url } });

    for (const bad of ['yesterday', '2026-02-30', '2026-13-01', '2026-11-01T10:00']) {
      const refused = await mt(['runs-prune', '--before', bad]);
      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.stderr).toContain('api:cli:date-invalid');
      expect(refused.stderr).toContain(bad);
    }
    // A date before the run: nothing of it goes.
    const early = await mt(['runs-prune', '--before', '2020-01-01', '--json']);
    expect(early.code, early.stderr).toBe(0);
    expect(JSON.parse(early.stdout)).toMatchObject({ runs: 0 });
    expect((await stack.api.request('GET', `/v1/runs/${run.body.id}`)).status).toBe(200);

    const tomorrow = new Date(Date.now() + DAY).toISOString();
    const done = await mt(['runs-prune', '--before', tomorrow, '--json']);
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout).runs).toBeGreaterThanOrEqual(1);
    expect((await stack.api.request('GET', `/v1/runs/${run.body.id}`)).status).toBe(404);
    // The runs kept by the first test that still run or wait are kept here too.
    const left = await client.query<{ status: string }>('SELECT status FROM mt_runs ORDER BY status');
    expect(left.rows.map((r) => r.status).sort()).toEqual(
      ['Completed', 'PendingApproval', 'Running', 'Running', 'WaitingForInput'].sort(),
    );
  });
});
