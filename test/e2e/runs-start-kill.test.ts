import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { useRunsStack } from './helpers/stack.js';

// A run's start is one statement that stores the run and its pg-boss job (a CTE of the run's insert): an `mt serve`
// killed with SIGKILL while runs are being started leaves every run with its job and every job with its run.
const stack = useRunsStack({ servers: 1 });

describe('an mt serve killed with SIGKILL while runs are started', { timeout: 90_000 }, () => {
  it('leaves no run without its job and no job without its run', async () => {
    const answered: number[] = [];
    const starts = Array.from({ length: 80 }, () =>
      stack.api.startRun('weather', { place: 'Vienna' }).then(
        (r) => answered.push(r.status),
        () => {},
      ),
    );
    // Killed once some starts have answered and others are still in flight.
    const deadline = Date.now() + 20_000;
    while (answered.length < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    await stack.servers[0]!.kill();
    await Promise.all(starts);
    expect(answered.filter((s) => s === 201).length).toBeGreaterThanOrEqual(5);

    const client = new pg.Client({ connectionString: stack.db!.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ runs: string; without_job: string; jobs: string; without_run: string }>(
        `SELECT (SELECT count(*) FROM mt_runs) AS runs,
                (SELECT count(*) FROM mt_runs r WHERE NOT EXISTS (
                   SELECT 1 FROM pgboss.job j WHERE j.name = 'mt-run' AND j.singleton_key = r.id::text)) AS without_job,
                (SELECT count(*) FROM pgboss.job WHERE name = 'mt-run') AS jobs,
                (SELECT count(*) FROM pgboss.job j WHERE j.name = 'mt-run' AND NOT EXISTS (
                   SELECT 1 FROM mt_runs r WHERE r.id::text = j.singleton_key)) AS without_run`,
      );
      const counts = rows[0]!;
      expect(Number(counts.runs)).toBeGreaterThanOrEqual(answered.filter((s) => s === 201).length);
      expect({ withoutJob: Number(counts.without_job), withoutRun: Number(counts.without_run) }).toEqual({
        withoutJob: 0,
        withoutRun: 0,
      });
      expect(Number(counts.jobs)).toBe(Number(counts.runs));
    } finally {
      await client.end();
    }
  });
});
