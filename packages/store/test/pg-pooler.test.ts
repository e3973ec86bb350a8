import { createPgDb, type Db, migrate, preparedFromEnv, serverDeadlines } from '@maitento/store';
import { createTestDatabase, holdLock, type PgBouncer, startPgBouncer, type TestDatabase } from '@maitento/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The store's pool through Debian's PgBouncer in transaction mode (docs/operations.md "Poolers"), with the direct URL
// for what needs a session: no startup parameter PgBouncer refuses, no named statement that a server connection
// lacks or already has, the server's deadlines inside every transaction, migrations on the direct connection.
const TIMEOUT_MS = 300;
let database: TestDatabase;
let bouncer: PgBouncer;
let db: Db;
let direct: pg.Client;

beforeAll(async () => {
  database = await createTestDatabase('mt_pg_pooler');
  // Three server connections for a pool of ten: consecutive statements of one client land on different ones.
  bouncer = await startPgBouncer({ mode: 'transaction', poolSize: 3 });
  db = createPgDb(bouncer.through(database.url), { directUrl: database.url, timeoutMs: TIMEOUT_MS, max: 10 });
  direct = new pg.Client({ connectionString: database.url });
  await direct.connect();
}, 30_000);

afterAll(async () => {
  await db?.close();
  await direct?.end();
  await bouncer?.stop();
  await database?.drop();
});

async function stored(tag: string): Promise<number> {
  const { rows } = await direct.query('SELECT count(*)::int AS n FROM effects WHERE tag = $1', [tag]);
  return rows[0].n;
}

describe('the store through PgBouncer in transaction mode', { timeout: 20_000 }, () => {
  it('migrates on the direct connection, under its advisory lock', async () => {
    expect(db.direct?.connectionString).toBe(database.url);
    const applied = await migrate(db);
    expect(applied.length).toBeGreaterThan(0);
    const { rows } = await direct.query("SELECT to_regclass('mt_runs') IS NOT NULL AS there");
    expect(rows[0].there).toBe(true);
    await direct.query('CREATE TABLE effects (tag text PRIMARY KEY)');
  });

  it('runs 200 statements named by their callers at once without a prepared-statement error', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 200 }, (_, i) =>
        db.query<{ n: number }>(`SELECT $1::int + ${i % 5} AS n`, [i], { name: `mt_pooled_${i % 5}` }),
      ),
    );
    const failed = results.filter((r) => r.status === 'rejected').map((r) => String(r.reason?.cause ?? r.reason));
    expect(failed).toEqual([]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value.rows[0].n : null))).toEqual(
      Array.from({ length: 200 }, (_, i) => i + (i % 5)),
    );
  });

  it("keeps the server's deadlines inside every transaction (SET LOCAL in BEGIN's round trip)", async () => {
    const { statement_timeout, idle_in_transaction_session_timeout } = serverDeadlines(TIMEOUT_MS);
    const seen = await Promise.all(
      Array.from({ length: 20 }, () =>
        db.transaction(async (tx) => {
          const a = await tx.query<{ ms: string }>("SELECT current_setting('statement_timeout') AS ms");
          const b = await tx.query<{ ms: string }>(
            "SELECT current_setting('idle_in_transaction_session_timeout') AS ms",
          );
          return [a.rows[0].ms, b.rows[0].ms];
        }),
      ),
    );
    const shown = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`);
    for (const pair of seen)
      expect(pair).toEqual([shown(statement_timeout), shown(idle_in_transaction_session_timeout)]);
  });

  it('a transaction waiting on a lock past its deadline is ended by PostgreSQL: 503 unavailable, nothing stored later', async () => {
    const tag = `locked-${Math.random()}`;
    const held = await holdLock(database.url, 'effects', 1_000);
    await expect(db.transaction((tx) => tx.query('INSERT INTO effects VALUES ($1)', [tag]))).rejects.toMatchObject({
      code: 'api:store:unavailable',
      status: 503,
    });
    await held.released;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await stored(tag)).toBe(0);
  });

  it('a single statement outside a transaction has no server deadline there: past the client deadline it is outcome-unknown, never "not done"', async () => {
    const tag = `single-${Math.random()}`;
    const held = await holdLock(database.url, 'effects', 1_000);
    await expect(db.query('INSERT INTO effects VALUES ($1)', [tag])).rejects.toMatchObject({
      code: 'api:store:outcome-unknown',
    });
    await held.released;
    // The server went on with it once the lock was released: "unknown" was the true answer.
    const until = Date.now() + 3000;
    while ((await stored(tag)) === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await stored(tag)).toBe(1);
  });

  it('names the cause when DATABASE_URL is a pooler and no direct URL is given: api:store:pooler-refused', async () => {
    const alone = createPgDb(bouncer.through(database.url), { directUrl: '', timeoutMs: 1000 });
    try {
      await expect(alone.query('SELECT 1')).rejects.toMatchObject({
        code: 'api:store:pooler-refused',
        message: expect.stringContaining('unsupported startup parameter'),
      });
    } finally {
      await alone.close();
    }
  });

  it('refuses an MT_DB_PREPARED that is neither on nor off', () => {
    expect(preparedFromEnv(true, {})).toBe(false);
    expect(preparedFromEnv(false, {})).toBe(true);
    expect(preparedFromEnv(true, { MT_DB_PREPARED: 'on' })).toBe(true);
    expect(() => preparedFromEnv(true, { MT_DB_PREPARED: 'yes' })).toThrow(
      expect.objectContaining({ code: 'api:store:setting-invalid' }),
    );
  });
});
