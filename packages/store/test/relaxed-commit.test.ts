import { randomUUID } from 'node:crypto';
import { claimRun, createNamespace, createPgDb, type Db, insertRun, RELAXED_POOL_MAX } from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Decision 0245: the job queue's own writes and a run's claim commit without waiting for the write-ahead log's flush;
// everything else the store writes still waits for it.
let database: TestDatabase;
let db: Db;

beforeAll(async () => {
  database = await createTestDatabase('mt_store_relaxed', { migrated: true });
  // One connection: a statement after the claim runs on the claim's session.
  db = createPgDb(database.url, { max: 1, applicationName: 'mt-test-relaxed' });
  await createNamespace(db, 'ns');
});

afterAll(async () => {
  await db?.close();
  await database?.drop();
});

const setting = async (q: Db) =>
  (await q.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]?.synchronous_commit;

describe('Db.relaxed', () => {
  it('is a pool of its own whose commits do not wait for the flush, named <process>-queue; the store pool waits', async () => {
    const relaxed = db.relaxed!;
    expect(relaxed).toBe(db.relaxed);
    expect(await setting(db)).toBe('on');
    expect(await setting(relaxed)).toBe('off');
    // More statements at once than its connections: it opens at most RELAXED_POOL_MAX.
    await Promise.all(Array.from({ length: 5 }, () => relaxed.query('SELECT pg_sleep(0.05)')));
    const { rows } = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = $2',
      [database.name, 'mt-test-relaxed-queue'],
    );
    expect(rows[0]?.n).toBeGreaterThan(0);
    expect(rows[0]?.n).toBeLessThanOrEqual(RELAXED_POOL_MAX);
  });

  it('is not made through a pooler, nor of a relaxed Db', () => {
    const pooled = createPgDb(database.url, { directUrl: `${database.url}?application_name=direct` });
    expect(pooled.relaxed).toBeUndefined();
    expect(db.relaxed!.relaxed).toBeUndefined();
    return pooled.close();
  });

  it("relaxes a claim's own commit only: the session's next statement waits for the flush again", async () => {
    const id = randomUUID();
    await insertRun(
      db,
      { id, namespace: 'ns', interaction: 'x', interactionVersion: 1, versions: [], inputs: {}, interactive: false },
      { type: 'run-started', data: {} },
    );
    const claimed = await claimRun(db, id, 'worker/1/0');
    expect(claimed?.run.claim).toBe('worker/1/0');
    expect(await setting(db)).toBe('on');
  });
});
