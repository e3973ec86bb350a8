import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ordersWorld, type World } from './helpers.js';

// A run's start: the run's insert and pg-boss's job (its public `send` with the transaction as its `db`) in ONE
// transaction, on a real PostgreSQL with the pg-boss this repository installs.
let world: World;

beforeAll(async () => {
  ({ world } = await ordersWorld((req) => ({ body: { order: req.url, status: 'shipped' } })));
});
afterAll(async () => {
  await world?.close();
});

async function count(sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await world.db.query<{ n: string }>(sql, params);
  return Number(rows[0]!.n);
}

const jobsOf = (runId: string) =>
  count("SELECT count(*) AS n FROM pgboss.job WHERE name = 'mt-run' AND singleton_key = $1", [runId]);

describe("a run's start", () => {
  it('stores the run and its job together: the job queued for the run, the run Running', async () => {
    // No worker: the job stays queued, to be looked at.
    const engine = await world.engine({ worker: false });
    const run = await engine.startRun(world.ns, 'support', { inputs: { message: 'Where is my order?' } });
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

    // The run's insert fails: neither is stored.
    await world.db.exec(
      "CREATE FUNCTION test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$;" +
        'CREATE TRIGGER test_refuse BEFORE INSERT ON mt_runs FOR EACH ROW EXECUTE FUNCTION test_refuse();',
    );
    await expect(start()).rejects.toThrow(/refused/);
    await world.db.exec('DROP TRIGGER test_refuse ON mt_runs;');
    expect({ runs: await runs(), jobs: await jobs() }).toEqual(before);

    // pg-boss's insert fails after the run's row was made in the same transaction: the run is not stored either.
    await world.db.exec(
      "CREATE FUNCTION test_refuse_job() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no job'; END $$;" +
        'CREATE TRIGGER test_refuse_job BEFORE INSERT ON pgboss.job_common FOR EACH ROW EXECUTE FUNCTION test_refuse_job();',
    );
    await expect(start()).rejects.toThrow(/no job/);
    await world.db.exec('DROP TRIGGER test_refuse_job ON pgboss.job_common;');
    expect({ runs: await runs(), jobs: await jobs() }).toEqual(before);

    // And once nothing is in the way, both again.
    const run = await start();
    expect(await jobsOf(run.id)).toBe(1);
    expect(await runs()).toBe(before.runs + 1);
  });
});
