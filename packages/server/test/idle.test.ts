// "Idle is quiet" (#42): a server nobody sends a request commits at most about one transaction a second, counted by
// PostgreSQL itself (`pg_stat_database.xact_commit` of a database only this server uses, read from another database so
// the reads are not counted). The server here runs without its worker: the pg-boss queue's own loops (supervise and
// monitor every 2 s, engine/src/worker/queue.ts) are being reworked and are counted by `npm run bench:idle` instead.
import { randomBytes } from 'node:crypto';
import { type RunningServer, startServer } from '@maitento/server';
import { IDLE_REASON } from '@maitento/store';
import { createTestDatabase, TEST_SERVER_URL, type TestDatabase } from '@maitento/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A backend reports its counts at least every 10 s when idle (PostgreSQL 15's PGSTAT_IDLE_INTERVAL): the window
// begins once the start's statements are all reported, and ends with the window's own reported within a second.
const SETTLE_MS = 11_000;
const WINDOW_MS = 10_000;
// PostgreSQL's own autovacuum visits of the database count too (a few transactions each, at its own times).
const SLACK = 5;
let database: TestDatabase;
let server: RunningServer | undefined;
let admin: pg.Client;

async function commits(): Promise<number> {
  const { rows } = await admin.query<{ n: string }>(
    'SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = $1',
    [database.name],
  );
  return Number(rows[0].n);
}

beforeAll(async () => {
  database = await createTestDatabase('mt_idle');
  admin = new pg.Client({ connectionString: TEST_SERVER_URL });
  await admin.connect();
  server = await startServer({
    databaseUrl: database.url,
    secretKey: randomBytes(32).toString('hex'),
    bootstrapKey: `mt_${randomBytes(24).toString('base64url')}`,
    port: 0,
    host: '127.0.0.1',
    logger: false,
    message: () => {},
    worker: false,
  });
});

afterAll(async () => {
  await server?.close();
  await admin?.end();
  await database?.drop();
});

describe('an idle server', { timeout: 60_000 }, () => {
  it('commits at most one transaction a second: its cache lease ended, the wake-up ping its one loop', async () => {
    // A request first, so the cache has been in use (its lease renews every L/4 then) and goes idle after.
    const health = async () =>
      (await (await fetch(`${server!.url}/health`)).json()) as { cache: { mode: string; reason?: string } };
    expect((await fetch(`${server!.url}/v1/keys`)).status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const before = await commits();
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
    const after = await commits();
    expect((await health()).cache).toEqual({ mode: 'read-through', reason: IDLE_REASON });
    // The wake-up connection's pings (one every 2-4 s): about 3 in the window.
    expect(after - before, `commits in ${WINDOW_MS} ms`).toBeLessThanOrEqual(WINDOW_MS / 1000 + SLACK);
  });
});
