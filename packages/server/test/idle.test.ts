// "Idle is quiet" (#42): a server nobody sends a request, with or without its worker, and a worker alone, each commit
// at most about one transaction a second, counted by PostgreSQL itself (`pg_stat_database.xact_commit` of a database
// only that process uses, read from another database so the reads are not counted). What they still do is the
// wake-up ping (one every 2-4 s) and, in a process that works the run queue, pg-boss's queue cache and migrations
// poll (a read a minute each) and a supervising pass a minute while the queue is idle (about 10 statements: the
// first 2 s after the worker started, the next a minute later, so outside this window; `npm run bench:idle` counts
// them over 60 s).
import { randomBytes } from 'node:crypto';
import { type RunningServer, type RunningWorker, startServer, startWorker } from '@maitento/server';
import { IDLE_REASON } from '@maitento/store';
import { createTestDatabase, TEST_SERVER_URL, type TestDatabase } from '@maitento/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A backend reports its counts at least every 10 s when idle (PostgreSQL 15's PGSTAT_IDLE_INTERVAL): the window
// begins once the start's statements (and a worker's first supervising pass, 2-3 s after it started) are all
// reported, and ends with the window's own reported within a second.
const SETTLE_MS = 15_000;
const WINDOW_MS = 10_000;
// PostgreSQL's own autovacuum visits of the database count too (a few transactions each, at its own times).
const SLACK = 5;
const secretKey = randomBytes(32).toString('hex');
const databases: TestDatabase[] = [];
let admin: pg.Client;
let apiOnly: RunningServer | undefined;
let withWorker: RunningServer | undefined;
let worker: RunningWorker | undefined;

async function commits(database: TestDatabase): Promise<number> {
  const { rows } = await admin.query<{ n: string }>(
    'SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = $1',
    [database.name],
  );
  return Number(rows[0].n);
}

async function serve(database: TestDatabase, runsWorker: boolean): Promise<RunningServer> {
  return startServer({
    databaseUrl: database.url,
    secretKey,
    bootstrapKey: `mt_${randomBytes(24).toString('base64url')}`,
    port: 0,
    host: '127.0.0.1',
    logger: false,
    message: () => {},
    worker: runsWorker,
  });
}

beforeAll(async () => {
  for (let i = 0; i < 3; i += 1) databases.push(await createTestDatabase('mt_idle'));
  admin = new pg.Client({ connectionString: TEST_SERVER_URL });
  await admin.connect();
  [apiOnly, withWorker, worker] = await Promise.all([
    serve(databases[0]!, false),
    serve(databases[1]!, true),
    startWorker({ databaseUrl: databases[2]!.url, secretKey }),
  ]);
});

afterAll(async () => {
  await Promise.all([apiOnly?.close(), withWorker?.close(), worker?.close()]);
  await admin?.end();
  for (const database of databases) await database.drop();
});

describe('idle processes', { timeout: 90_000 }, () => {
  it('commit at most one transaction a second: a server without and with its worker, a worker alone', async () => {
    // A request first, so the cache has been in use (its lease renews every L/4 then) and goes idle after.
    for (const server of [apiOnly!, withWorker!]) expect((await fetch(`${server.url}/v1/keys`)).status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const before = await Promise.all(databases.map(commits));
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
    const after = await Promise.all(databases.map(commits));
    for (const server of [apiOnly!, withWorker!]) {
      const health = (await (await fetch(`${server.url}/health`)).json()) as { cache: unknown };
      expect(health.cache).toEqual({ mode: 'read-through', reason: IDLE_REASON });
    }
    const counted = {
      'mt serve --no-worker': after[0]! - before[0]!,
      'mt serve': after[1]! - before[1]!,
      'mt worker': after[2]! - before[2]!,
    };
    for (const [what, n] of Object.entries(counted)) {
      expect(n, `${what}: commits in ${WINDOW_MS} ms (${JSON.stringify(counted)})`).toBeLessThanOrEqual(
        WINDOW_MS / 1000 + SLACK,
      );
    }
  });
});
