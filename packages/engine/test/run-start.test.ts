import { isMtError } from '@maitento/errors';
import { ordersRepo } from '@maitento/testkit';
import { appendRunEventsCompleting, claimRun } from '@maitento/store';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobComplete, jobFetch, jobInsert } from '../src/worker/queue.js';
import { makeWorld, startUpstream, waitFor, type World } from './helpers.js';

// A run's start: the run's insert and pg-boss's job insert in ONE statement (a data-modifying CTE), on a real
// PostgreSQL with the pg-boss this repository installs. If a pg-boss upgrade changes the shape of its job insert, the
// first test fails (startRun throws api:runs:queue-changed) rather than falling back to anything.
let world: World;
let upstream: Awaited<ReturnType<typeof startUpstream>>;

beforeAll(async () => {
  upstream = await startUpstream((req) => ({ body: { order: req.url, status: 'shipped' } }));
  world = await makeWorld();
  await world.secret('orders-key', 'sk-orders-123');
  await world.deployFiles(ordersRepo({ origin: upstream.url }));
});
afterAll(async () => {
  await world?.close();
  await upstream?.close();
});

/** Every statement any pg client of this process sends while `fn` runs (the store's pool and pg-boss's alike). */
async function statementsOf<T>(fn: () => Promise<T>): Promise<{ result: T; texts: string[] }> {
  const texts: string[] = [];
  const query = pg.Client.prototype.query;
  // biome-ignore lint/suspicious/noExplicitAny: pg's overloads
  pg.Client.prototype.query = function (this: pg.Client, config: any, ...rest: any[]) {
    texts.push(typeof config === 'string' ? config : (config?.text ?? ''));
    // biome-ignore lint/suspicious/noExplicitAny: pg's overloads
    return (query as any).call(this, config, ...rest);
  } as typeof query;
  try {
    return { result: await fn(), texts };
  } finally {
    pg.Client.prototype.query = query;
  }
}

async function count(sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await world.db.query<{ n: string }>(sql, params);
  return Number(rows[0]!.n);
}

/** What a statement of a run is, or `timer` for what runs with no run at all (pg-boss's upkeep, the engine's timers). */
function kindOf(text: string): string {
  // The interaction comes from the store cache: its one read is the cache's epoch read when no lease holds (this
  // engine's own cache has none), and nothing at all in a server whose lease holds (packages/server/test/caches.test.ts).
  if (/^SELECT name, version, enabled|^SELECT epoch FROM mt_cache_epoch$/.test(text)) return 'read';
  if (/^WITH job AS/.test(text)) return 'start';
  // The start's own transaction (decision 0101): BEGIN with the transaction id in one round trip, then COMMIT.
  if (/^BEGIN; SELECT pg_current_xact_id\(\)/.test(text)) return 'begin';
  if (/^COMMIT$/.test(text)) return 'commit';
  if (/WITH\s+next AS/.test(text)) return 'fetch';
  if (/SET claim/.test(text)) return 'claim';
  if (/SET last_seq/.test(text)) return 'write';
  if (/^\s*WITH\s+results\s+AS\s*\(\s*UPDATE\s+\S+\s+SET\s+completed_on/.test(text)) return 'complete';
  const timers =
    /test_poll|pgboss\.(queue|version|instance|subscription)|pg_stat|relname|SET LOCAL|mt_approvals|idle|heartbeat_on|cancel_requested|job_now\(\)\) \* 1000|locked_parents|WITH\s+due AS|WITH\s+budget AS/;
  return timers.test(text) ? 'timer' : text.replace(/\s+/g, ' ').trim().slice(0, 60);
}

const jobsOf = (runId: string) =>
  count("SELECT count(*) AS n FROM pgboss.job WHERE name = 'mt-run' AND singleton_key = $1", [runId]);

describe("a run's start", () => {
  it("stores the run and its job in one statement, in a transaction of its own, pg-boss's own insert in it", async () => {
    // No worker: the job stays queued, to be looked at.
    const engine = await world.engine({ worker: false });
    const { result: run, texts } = await statementsOf(() =>
      engine.startRun(world.ns, 'support', { inputs: { message: 'Where is my order?' } }),
    );
    // One transaction around it, whose COMMIT the store can settle when its answer is lost (decision 0101), and
    // pg-boss's job insert only inside the run's statement (pg-boss's upkeep, which may run meanwhile, is left out).
    expect(texts.filter((t) => ['begin', 'commit'].includes(kindOf(t)))).toHaveLength(2);
    expect(texts.filter((t) => /^\s*ROLLBACK\s*$/i.test(t))).toEqual([]);
    expect(texts.filter((t) => /^\s*INSERT INTO pgboss\.job/.test(t))).toEqual([]);
    const starts = texts.filter((t) => kindOf(t) === 'start');
    expect(starts).toHaveLength(1);
    expect(starts[0]).toMatch(/^WITH job AS \(INSERT INTO pgboss\.job_common/);
    expect(starts[0]).toContain('INSERT INTO mt_runs');
    expect(texts.filter((t) => t.includes('INSERT INTO mt_runs'))).toEqual(starts);
    expect(await jobsOf(run.id)).toBe(1);
    const { rows } = await world.db.query<{ state: string; data: { runId: string } }>(
      "SELECT state, data FROM pgboss.job WHERE name = 'mt-run' AND singleton_key = $1",
      [run.id],
    );
    expect(rows[0]).toEqual({ state: 'created', data: { runId: run.id } });
    expect((await engine.getRun(world.ns, run.id)).status).toBe('Running');
  });

  it('stores no job when the run cannot be stored, and no run when the job is not stored', async () => {
    const engine = await world.engine({ worker: false });
    const runs = () => count('SELECT count(*) AS n FROM mt_runs');
    const jobs = () => count("SELECT count(*) AS n FROM pgboss.job WHERE name = 'mt-run'");
    const start = () => engine.startRun(world.ns, 'support', { inputs: { message: 'Where is my order?' } });
    const before = { runs: await runs(), jobs: await jobs() };

    // The run's insert fails after the job's row was made in the same statement: neither is stored.
    await world.db.exec(
      "CREATE FUNCTION test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$;" +
        'CREATE TRIGGER test_refuse BEFORE INSERT ON mt_runs FOR EACH ROW EXECUTE FUNCTION test_refuse();',
    );
    await expect(start()).rejects.toThrow(/refused/);
    await world.db.exec('DROP TRIGGER test_refuse ON mt_runs;');
    expect({ runs: await runs(), jobs: await jobs() }).toEqual(before);

    // pg-boss's insert skips its row (as its ON CONFLICT DO NOTHING would): the run is not stored either.
    await world.db.exec(
      'CREATE FUNCTION test_skip() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;' +
        'CREATE TRIGGER test_skip BEFORE INSERT ON pgboss.job_common FOR EACH ROW EXECUTE FUNCTION test_skip();',
    );
    // The statement fails (division by zero, which pg-boss reports as its own insert failing).
    await expect(start()).rejects.toThrow(/division by zero|could not be created/);
    await world.db.exec('DROP TRIGGER test_skip ON pgboss.job_common;');
    expect({ runs: await runs(), jobs: await jobs() }).toEqual(before);

    // And once nothing is in the way, both again.
    const run = await start();
    expect(await jobsOf(run.id)).toBe(1);
    expect(await runs()).toBe(before.runs + 1);
  });

  it("refuses, with a code, a job insert of any other shape than pg-boss 12's INSERT … RETURNING id", () => {
    const code = (text: string, values: unknown[] | undefined) => {
      try {
        jobInsert(text, values);
        return 'accepted';
      } catch (error) {
        return isMtError(error) ? error.code : String(error);
      }
    };
    expect(
      code('\n INSERT INTO pgboss.job_common (id) SELECT x FROM json_to_recordset($1::text::json) RETURNING id\n', [
        '[]',
      ]),
    ).toBe('accepted');
    // pg-boss's shape with notify on: a WITH, which a CTE cannot hold when it modifies data.
    expect(
      code('WITH ins AS (INSERT INTO pgboss.job_common (id) SELECT 1 RETURNING id) SELECT id FROM ins', ['[]']),
    ).toBe('api:runs:queue-changed');
    expect(code('INSERT INTO pgboss.job_common (id) SELECT $1 RETURNING id; SELECT 1', ['[]'])).toBe(
      'api:runs:queue-changed',
    );
    expect(code('INSERT INTO pgboss.job_common (id) SELECT $2 RETURNING id', ['[]'])).toBe('api:runs:queue-changed');
    expect(code('INSERT INTO pgboss.job_common (id) SELECT $1 RETURNING id, start_after', ['[]'])).toBe(
      'api:runs:queue-changed',
    );
  });

  it("refuses, with a code, a job fetch of any other shape than pg-boss 12's WITH … UPDATE … RETURNING", () => {
    const code = (text: string, values: unknown[] = []) => {
      try {
        const { ctes, update } = jobFetch(text, values);
        return `${ctes} | ${update.slice(0, 10)}`;
      } catch (error) {
        return isMtError(error) ? error.code : String(error);
      }
    };
    const returning = 'RETURNING j.id, name, data, retry_count as "retryCount", expire_seconds as "expireInSeconds"';
    const ok = `\n WITH\n next AS (SELECT j.id FROM pgboss.job_common j WHERE j.name = 'mt-run' LIMIT 2 FOR UPDATE OF j SKIP LOCKED)
      , singleton_ranking AS (SELECT id, row_number() OVER (PARTITION BY singleton_key) as singleton_rn FROM next)
      UPDATE pgboss.job_common j SET state = 'active' FROM singleton_ranking WHERE name = 'mt-run' AND j.id = singleton_ranking.id
      ${returning}\n`;
    expect(code(ok)).toMatch(/^next AS \(.*\) \| UPDATE pgb$/s);
    // The fetch without a WITH (nothing for the claim to join), with a second statement, a top-level SELECT
    // instead of the UPDATE, other columns returned, or a placeholder without its value: refused.
    expect(code(`UPDATE pgboss.job_common j SET state = 'active' ${returning}`)).toBe('api:runs:queue-changed');
    expect(code(`${ok}; SELECT 1`)).toBe('api:runs:queue-changed');
    expect(code(ok.replace('UPDATE pgboss.job_common j SET', 'SELECT'))).toBe('api:runs:queue-changed');
    expect(code(ok.replace(returning, 'RETURNING j.id, name, data'))).toBe('api:runs:queue-changed');
    expect(code(ok.replace("'mt-run' LIMIT", "'mt-run' AND priority >= $1 LIMIT"))).toBe('api:runs:queue-changed');
    expect(code(ok.replace("'mt-run' LIMIT", "'mt-run' AND priority >= $1 LIMIT"), [0])).not.toBe(
      'api:runs:queue-changed',
    );
    // The UPDATE wrapped in a CTE of its own with a SELECT around it (as pg-boss's complete is): refused.
    expect(
      code(
        `WITH next AS (SELECT 1), done AS (UPDATE pgboss.job_common SET state = 'active' ${returning}) SELECT * FROM done`,
      ),
    ).toBe('api:runs:queue-changed');
  });

  it("completes a job in a run's append only when the append is stored: a refused append leaves the job as it was", async () => {
    const engine = await world.engine({ worker: false });
    const run = await engine.startRun(world.ns, 'support', { inputs: { message: 'Where is my order?' } });
    await world.db.exec('CREATE TABLE test_jobs (id uuid PRIMARY KEY, state text)');
    const jobId = '00000000-0000-4000-8000-000000000001';
    await world.db.query("INSERT INTO test_jobs VALUES ($1, 'active')", [jobId]);
    const complete = { update: "UPDATE test_jobs SET state = 'completed' WHERE id = $1 RETURNING id", values: [jobId] };
    const state = async () => (await world.db.query<{ state: string }>('SELECT state FROM test_jobs')).rows[0]!.state;
    await claimRun(world.db, run.id, 'attempt-1');
    const events = [{ type: 'run-cancelled', data: {} }];
    const change = { status: 'Cancelled' as const };
    // Another attempt's claim, then a stale expected seq: nothing stored, the job untouched.
    expect(await appendRunEventsCompleting(world.db, run.id, { claim: 'attempt-0' }, events, change, complete)).toEqual(
      { seq: false, completed: [] },
    );
    expect(
      await appendRunEventsCompleting(world.db, run.id, { claim: 'attempt-1', expectSeq: 7 }, events, change, complete),
    ).toEqual({ seq: false, completed: [] });
    expect(await state()).toBe('active');
    expect((await engine.getRun(world.ns, run.id)).status).toBe('Running');
    // The attempt's own: both.
    expect(
      await appendRunEventsCompleting(world.db, run.id, { claim: 'attempt-1', expectSeq: 1 }, events, change, complete),
    ).toEqual({ seq: 2, completed: [jobId] });
    expect(await state()).toBe('completed');
    expect((await engine.getRun(world.ns, run.id)).status).toBe('Cancelled');
    await world.db.exec('DROP TABLE test_jobs');
  });

  /** The statements of one run of `calls` tool calls in sequence, from its start to its job's complete. */
  async function statementsOfRun(calls: number): Promise<string[]> {
    const turns = (order: string) => [
      ...Array.from({ length: calls }, (_, i) => ({
        toolCalls: [
          {
            name: 'get-order',
            arguments: { additionalInputs: { 'path.orderId': `${order}-${i}`, 'query.verbose': null } },
          },
        ],
      })),
      { text: 'Shipped.' },
    ];
    world.script('support', turns('W'));
    const engine = await world.engine();
    // A first run warms the caches (the pinned versions, pg-boss's queue), as every run but a process's first finds them.
    const warm = await engine.startRun(world.ns, 'support', { inputs: { message: 'Where is my order?' } });
    await waitFor(engine, world.ns, warm.id);
    // The runs the tests above left queued (no worker) are taken first: counted from when the queue is empty.
    const open = () => count("SELECT count(*) AS n FROM pgboss.job WHERE name = 'mt-run' AND state < 'completed'");
    for (let waited = 0; (await open()) > 0 && waited < 200; waited++) await new Promise((r) => setTimeout(r, 50));
    expect(await open()).toBe(0);
    world.script('support', turns('A'));
    const { result: run, texts } = await statementsOf(async () => {
      const run = await engine.startRun(world.ns, 'support', { inputs: { message: 'Where is my order?' } });
      const deadline = Date.now() + 10_000;
      // Polled with a statement the filter below leaves out.
      for (;;) {
        const { rows } = await world.db.query<{ status: string }>(
          'SELECT status, 1 AS test_poll FROM mt_runs WHERE id = $1',
          [run.id],
        );
        if (rows[0]!.status !== 'Running' || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      // pg-boss's complete follows the run's last write.
      await new Promise((r) => setTimeout(r, 200));
      expect((await engine.getRun(world.ns, run.id)).status).toBe('Completed');
      return run;
    });
    await engine.close();
    // What runs with no run at all (pg-boss's supervisor and monitor, the engine's timers) is left out; so is the
    // test's own polling.
    const kinds = texts.map(kindOf).filter((k) => k !== 'timer');
    // The claim is in the fetch's own statement: no statement claims alone.
    const fetches = texts.filter((t) => kindOf(t) === 'fetch');
    for (const fetch of fetches) expect(fetch).toMatch(/claimed AS \(UPDATE mt_runs r SET claim = /);
    // One fallback poll (every 2 s) may land in the run: at most one fetch more, never a second one of the run's own.
    expect(fetches.length).toBeGreaterThanOrEqual(1);
    expect(fetches.length).toBeLessThanOrEqual(2);
    // pg-boss's complete is in the run's last write: the write that ended it completed its job.
    const ending = texts.filter((t) => /^WITH job_done AS \(UPDATE pgboss\.job_common SET completed_on/.test(t));
    expect(ending).toHaveLength(1);
    expect(ending[0]).toContain('UPDATE mt_runs SET last_seq');
    expect(
      await count(
        "SELECT count(*) AS n FROM pgboss.job WHERE name = 'mt-run' AND state = 'completed' AND singleton_key = $1",
        [run.id],
      ),
    ).toBe(1);
    return kinds.filter((k) => k !== 'fetch');
  }

  it('a run of one tool call makes 8 statements: read, the start in its transaction, fetch with the claim, three step writes (the last completes the job)', async () => {
    expect((await statementsOfRun(1)).sort()).toEqual(
      ['read', 'begin', 'start', 'commit', 'write', 'write', 'write'].sort(),
    );
  });

  it("a run of bench:runs' shape (two tool calls in turn) makes 10 statements with the read, 9 without it", async () => {
    // The read is the cache's epoch read of this engine, whose cache holds no lease; in `mt serve` and bench:runs the
    // lease holds and it costs nothing (caches.test.ts), which leaves the start in its transaction, the fetch and five
    // writes.
    const kinds = await statementsOfRun(2);
    expect(kinds.sort()).toEqual(
      ['read', 'begin', 'start', 'commit', 'write', 'write', 'write', 'write', 'write'].sort(),
    );
    expect(kinds.filter((k) => k !== 'read').length + 1).toBeLessThanOrEqual(9);
  });

  it("refuses, with a code, a complete of any other shape than pg-boss 12's WITH results AS (UPDATE … RETURNING id)", () => {
    const code = (text: string, values: unknown[] = ['mt-run', [], null, []]) => {
      try {
        return jobComplete(text, values).update.slice(0, 30);
      } catch (error) {
        return isMtError(error) ? error.code : String(error);
      }
    };
    const update =
      "UPDATE pgboss.job_common SET completed_on = pgboss.job_now(), state = 'completed', output = $3::jsonb " +
      "WHERE name = $1 AND id = ANY($2::uuid[]) AND state = 'active' AND (id::text || ':' || retry_count::text) = ANY($4::text[]) RETURNING id";
    const select = "SELECT COUNT(*), COALESCE(array_agg(id), '{}'::uuid[]) AS ids FROM results";
    expect(code(`\n    WITH results AS (\n      ${update}\n    )\n    ${select}\n`)).toBe(
      'UPDATE pgboss.job_common SET c',
    );
    // Another final SELECT, a statement after it, the UPDATE returning more, a placeholder without its value: refused.
    expect(code(`WITH results AS (${update}) SELECT COUNT(*) FROM results`)).toBe('api:runs:queue-changed');
    expect(code(`WITH results AS (${update}) ${select}; SELECT 1`)).toBe('api:runs:queue-changed');
    expect(code(`WITH results AS (${update.replace('RETURNING id', 'RETURNING id, name')}) ${select}`)).toBe(
      'api:runs:queue-changed',
    );
    expect(code(`WITH results AS (${update.replace('$4', '$5')}) ${select}`)).toBe('api:runs:queue-changed');
    expect(code(`WITH results AS (${update}), more AS (DELETE FROM pgboss.job RETURNING id) ${select}`)).toBe(
      'api:runs:queue-changed',
    );
  });
});
