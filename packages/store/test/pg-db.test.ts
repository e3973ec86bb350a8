import { createPgDb, type Db, migrate } from '@maitento/store';
import { createTestDatabase, startTcpProxy, type TcpProxy, type TestDatabase } from '@maitento/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// A pool whose connections go through a TCP proxy that stops forwarding: statements fail within their deadline
// instead of hanging, and the pool says when the database stops and starts answering.
let database: TestDatabase;
let proxy: TcpProxy;
let db: Db;
const changes: boolean[] = [];

beforeAll(async () => {
  database = await createTestDatabase('mt_pg_db');
  proxy = await startTcpProxy();
  // Migrated on a connection of the default deadline: at load 22 a migration statement took more than the 300 ms
  // the tests below are about.
  const migrating = createPgDb(database.url);
  await migrate(migrating).finally(() => migrating.close());
  db = createPgDb(proxy.via(database.url), { timeoutMs: 300 });
  db.onReachability((reachable) => changes.push(reachable));
  // A first connection through the proxy, tried again for up to 10 s: opening one under load may take more than the
  // 300 ms; what the tests count starts once it answers.
  const deadline = Date.now() + 10_000;
  while (
    !(await db.query('SELECT 1').then(
      () => true,
      () => Date.now() > deadline,
    ))
  ) {
    // again
  }
  expect(db.reachable).toBe(true);
  changes.length = 0;
});

afterAll(async () => {
  proxy?.thaw();
  await db?.close();
  await proxy?.close();
  await database?.drop();
});

async function timed<T>(work: Promise<T>): Promise<{ ms: number; error: unknown }> {
  const began = performance.now();
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  return { ms: performance.now() - began, error };
}

describe('createPgDb with a stalled connection', () => {
  it('fails every statement with api:store:unavailable within its deadline, and answers again after', async () => {
    await db.query('SELECT 1');
    proxy.freeze();
    try {
      // On a pooled connection (frozen mid-way), on new connections, in a transaction, several at once.
      const results = await Promise.all([
        timed(db.query('SELECT 1')),
        timed(db.query('SELECT epoch FROM mt_cache_epoch')),
        // The cache's epoch read, a prepared statement of its own: bounded the same way.
        timed(db.query('SELECT epoch FROM mt_cache_epoch', [], { name: 'mt_cache_epoch_read' })),
        timed(db.transaction((tx) => tx.query('SELECT 1'))),
        timed(db.executeSql('SELECT $1::int AS one', [1])),
      ]);
      const again = await timed(db.query('SELECT 1'));
      // A transaction's statement before its COMMIT is "not done" for certain; a single statement sent on a pooled
      // connection frozen mid-way got no answer, and may have committed (what it did is not known): both 503.
      expect(results[3]?.error).toMatchObject({ code: 'api:store:unavailable' });
      for (const { ms, error } of [...results, again]) {
        expect(error).toMatchObject({ status: 503 });
        expect(['api:store:unavailable', 'api:store:outcome-unknown']).toContain((error as { code: string }).code);
        // A statement waits at most the deadline for a connection and the deadline for its answer.
        expect(ms).toBeLessThan(2 * 300 + 500);
      }
      expect(db.reachable).toBe(false);
    } finally {
      proxy.thaw();
    }
    const deadline = Date.now() + 5000;
    while (
      !(await db.query('SELECT 1').then(
        () => true,
        () => false,
      ))
    ) {
      if (Date.now() > deadline) throw new Error('the pool did not answer again within 5 s');
    }
    expect(db.reachable).toBe(true);
    expect(changes).toEqual([false, true]);
  });

  it('does not call the database unreachable for a statement begun before its last answer', async () => {
    const before = changes.length;
    // Begun first, it times out (300 ms) after the statement begun next has answered: that failure is older than
    // the answer, so the state stays "answering" (once it flipped to unreachable and back: two lines in the log).
    const slow = timed(db.query('SELECT pg_sleep(0.6)'));
    await db.query('SELECT 1');
    expect(await slow).toMatchObject({ error: { code: 'api:store:unavailable' } });
    expect(db.reachable).toBe(true);
    expect(changes.slice(before)).toEqual([]);
    // Begun after the last answer, the same failure does say so.
    await expect(db.query('SELECT pg_sleep(0.6)')).rejects.toMatchObject({ code: 'api:store:unavailable' });
    expect(db.reachable).toBe(false);
    await db.query('SELECT 1');
    expect(changes.slice(before)).toEqual([false, true]);
  });

  it('does not count a failing statement as an unreachable database', async () => {
    await expect(db.query('SELECT * FROM no_such_table')).rejects.toMatchObject({ code: '42P01' });
    expect(db.reachable).toBe(true);
  });
});

// Keeps the process busy for `ms` without giving the event loop a turn (a long synchronous task; on a loaded machine,
// a process that got no CPU meanwhile looks the same to its timers).
function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
}

describe('createPgDb with the event loop blocked past the deadline', () => {
  it('answers a statement whose answer arrived meanwhile, rather than calling the database unreachable', async () => {
    const direct = createPgDb(database.url, { max: 1, timeoutMs: 300 });
    const flips: boolean[] = [];
    direct.onReachability((reachable) => flips.push(reachable));
    try {
      await direct.query('SELECT 1');
      // On a pooled connection: the statement is sent (its connection handed over on the pool's next tick; ticks
      // give the loop no turn), then the loop is held for 600 ms (PostgreSQL answers in under a millisecond), then
      // the deadline's timer and the answer are both due.
      const sent = vi.spyOn(pg.Client.prototype, 'query');
      try {
        const pooled = direct.query<{ n: number }>('SELECT 1 AS n');
        for (let i = 0; i < 1000 && sent.mock.calls.length === 0; i++) {
          await new Promise((resolve) => process.nextTick(resolve));
        }
        expect(sent).toHaveBeenCalledTimes(1);
        block(600);
        expect((await pooled).rows).toEqual([{ n: 1 }]);
      } finally {
        sent.mockRestore();
      }
      // A statement of a transaction, sent at once on the transaction's connection.
      const inTransaction = await direct.transaction(async (tx) => {
        const answer = tx.query<{ n: number }>('SELECT 2 AS n');
        block(600);
        return (await answer).rows;
      });
      expect(inTransaction).toEqual([{ n: 2 }]);
      expect(direct.reachable).toBe(true);
      expect(flips).toEqual([]);
      // A statement that does not answer within the deadline still fails, within it and the blocked time.
      const slow = await timed(direct.query('SELECT pg_sleep(1)'));
      expect(slow.error).toMatchObject({ code: 'api:store:unavailable' });
      expect(slow.ms).toBeLessThan(900);
    } finally {
      await direct.close();
    }
  });
});

describe('createPgDb with a named statement', () => {
  it('prepares it once on the connection and runs it by name after; an unnamed statement is not prepared', async () => {
    const direct = createPgDb(database.url, { max: 1, timeoutMs: 2000 });
    try {
      const prepared = async () =>
        (
          await direct.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements ORDER BY statement')
        ).rows.map((row) => row.statement);
      await direct.query('SELECT epoch FROM mt_cache_epoch');
      expect(await prepared()).toEqual([]);
      for (let i = 0; i < 3; i++) {
        const { rows } = await direct.query<{ epoch: string }>('SELECT epoch FROM mt_cache_epoch', [], {
          name: 'mt_cache_epoch_read',
        });
        expect(rows).toHaveLength(1);
      }
      // One pooled connection (max 1): the three reads ran on it, the statement was parsed once and kept.
      expect(await prepared()).toEqual(['SELECT epoch FROM mt_cache_epoch']);
    } finally {
      await direct.close();
    }
  });
});
