import { createPgDb, type Db, migrate, serverDeadlines } from '@maitento/store';
import { createTestDatabase, holdLock, startTcpProxy, type TcpProxy, type TestDatabase } from '@maitento/testkit';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

// What a write leaves when its answer does not come: PostgreSQL ends what the client stopped waiting for (its own
// deadlines, shorter than the client's), and a COMMIT that got no answer is settled by asking PostgreSQL what became
// of the transaction. Every case counts the rows actually stored, on a connection of its own.
const TIMEOUT_MS = 300;
let database: TestDatabase;
let proxy: TcpProxy;
let db: Db;
let direct: pg.Client;

beforeAll(async () => {
  database = await createTestDatabase('mt_pg_outcome');
  const migrating = createPgDb(database.url);
  await migrate(migrating).finally(() => migrating.close());
  direct = new pg.Client({ connectionString: database.url });
  await direct.connect();
  await direct.query('CREATE TABLE effects (tag text PRIMARY KEY)');
  proxy = await startTcpProxy();
  db = createPgDb(proxy.via(database.url), { timeoutMs: TIMEOUT_MS });
  // A first connection through the proxy, tried again for up to 10 s (opening one under load may take longer).
  const deadline = Date.now() + 10_000;
  while (
    !(await db.query('SELECT 1').then(
      () => true,
      () => Date.now() > deadline,
    ))
  ) {
    // again
  }
});

afterEach(() => {
  proxy.forward();
});

afterAll(async () => {
  proxy?.forward();
  await db?.close();
  await proxy?.close();
  await direct?.end();
  await database?.drop();
});

const stored = async (tag: string) =>
  (await direct.query('SELECT count(*)::int AS n FROM effects WHERE tag = $1', [tag])).rows[0].n as number;
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('createPgDb: the outcome of a write is certain', { timeout: 30_000 }, () => {
  it('sends PostgreSQL its own deadlines, shorter than the client’s, on every pooled connection', async () => {
    // pg_settings gives them in milliseconds, the unit they were sent in.
    const { rows } = await db.query<{ name: string; setting: string }>(
      "SELECT name, setting FROM pg_settings WHERE name IN ('statement_timeout', 'idle_in_transaction_session_timeout') " +
        'ORDER BY name',
    );
    const expected = serverDeadlines(TIMEOUT_MS);
    expect(rows).toEqual([
      { name: 'idle_in_transaction_session_timeout', setting: String(expected.idle_in_transaction_session_timeout) },
      { name: 'statement_timeout', setting: String(expected.statement_timeout) },
    ]);
    expect(expected.statement_timeout).toBeLessThan(TIMEOUT_MS);
  });

  it('lifts the server’s deadline in a transaction that runs `exec` (migrations wait for each other)', async () => {
    await db.transaction(async (tx) => {
      await tx.exec('SELECT pg_sleep(0.5)');
    });
    // And only there: the next transaction on the same connections is bounded again.
    await expect(db.transaction((tx) => tx.query('SELECT pg_sleep(0.5)'))).rejects.toMatchObject({
      code: 'api:store:unavailable',
    });
  });

  it('a statement waiting on a lock past its deadline is ended by PostgreSQL: 503 unavailable, nothing stored later', async () => {
    for (const write of [
      (tag: string) => db.query('INSERT INTO effects VALUES ($1)', [tag]),
      (tag: string) => db.transaction((tx) => tx.query('INSERT INTO effects VALUES ($1)', [tag])),
    ]) {
      const tag = `locked-${Math.random()}`;
      const held = await holdLock(database.url, 'effects', 1_000);
      await expect(write(tag)).rejects.toMatchObject({ code: 'api:store:unavailable', status: 503 });
      await held.released;
      await wait(200);
      expect(await stored(tag)).toBe(0);
    }
  });

  it('a COMMIT carried out whose answer is lost is settled as committed: the transaction resolves with its result', async () => {
    const tag = `committed-${Math.random()}`;
    const result = db.transaction(async (tx) => {
      await tx.query('INSERT INTO effects VALUES ($1)', [tag]);
      // The COMMIT arrives, its answer does not; the network comes back while the outcome is being asked.
      proxy.blackHole('replies');
      setTimeout(() => proxy.forward(), 100);
      return 'the result';
    });
    await expect(result).resolves.toBe('the result');
    expect(await stored(tag)).toBe(1);
  });

  it('a COMMIT that never arrived is settled as not done: 503 unavailable, nothing stored, ever', async () => {
    const tag = `aborted-${Math.random()}`;
    const result = db.transaction(async (tx) => {
      await tx.query('INSERT INTO effects VALUES ($1)', [tag]);
      proxy.blackHole();
      setTimeout(() => proxy.forward(), 100);
    });
    await expect(result).rejects.toMatchObject({ code: 'api:store:unavailable' });
    expect(await stored(tag)).toBe(0);
    // Its backend was ended, not left holding the transaction until its idle deadline.
    await wait(serverDeadlines(TIMEOUT_MS).idle_in_transaction_session_timeout / 4);
    expect(await stored(tag)).toBe(0);
  });

  it('a COMMIT that cannot be settled (the database unreachable throughout) fails with api:store:outcome-unknown', async () => {
    const tag = `unknown-${Math.random()}`;
    const began = performance.now();
    const result = db.transaction(async (tx) => {
      await tx.query('INSERT INTO effects VALUES ($1)', [tag]);
      proxy.blackHole('replies');
    });
    await expect(result).rejects.toMatchObject({ code: 'api:store:outcome-unknown', status: 503 });
    // Asked about for a bounded time: the idle deadline and two statement deadlines, then some slack.
    expect(performance.now() - began).toBeLessThan(4 * TIMEOUT_MS + 2_000);
    // It was in fact committed: "unknown" is what the client can say, not "not done".
    expect(await stored(tag)).toBe(1);
  });

  it('a single statement sent whose answer is lost fails with api:store:outcome-unknown, not unavailable', async () => {
    const tag = `autocommit-${Math.random()}`;
    await db.query('SELECT 1');
    const write = db.query('INSERT INTO effects VALUES ($1)', [tag]);
    proxy.blackHole('replies');
    await expect(write).rejects.toMatchObject({ code: 'api:store:outcome-unknown' });
    expect(await stored(tag)).toBe(1);
  });

  it('a failure before the COMMIT was sent is certain: 503 unavailable, nothing stored', async () => {
    const tag = `before-commit-${Math.random()}`;
    const result = db.transaction(async (tx) => {
      await tx.query('INSERT INTO effects VALUES ($1)', [tag]);
      proxy.blackHole();
      await tx.query('SELECT 1');
    });
    await expect(result).rejects.toMatchObject({ code: 'api:store:unavailable' });
    proxy.forward();
    await wait(serverDeadlines(TIMEOUT_MS).idle_in_transaction_session_timeout / 4);
    expect(await stored(tag)).toBe(0);
  });
});
