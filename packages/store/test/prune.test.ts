import {
  createPgDb,
  type Db,
  PRUNE_BATCH_MS,
  PRUNE_FIRST_BATCH_SIZE,
  PRUNE_MIN_BATCH_SIZE,
  pruneBefore,
} from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The retention's batches (docs/operations.md, "Data lifecycle"; decision 0251): a batch whose transaction took longer
// than PRUNE_BATCH_MS halves the next one, down to PRUNE_MIN_BATCH_SIZE rows, so runs that are slow to delete (long
// histories, a loaded database) still hold their locks briefly. The whole job, beside real runs, is tested in
// test/e2e/retention.test.ts.
let database: TestDatabase;
let db: Db;
let client: pg.Client;

beforeAll(async () => {
  database = await createTestDatabase('mt_store_prune', { migrated: true });
  db = createPgDb(database.url);
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
});

afterAll(async () => {
  await client?.end();
  await db?.close();
  await database?.drop();
});

describe('pruneBefore', () => {
  it('starts at the first batch size, halves the next after a slow one down to the floor, and deletes every ended run', async () => {
    await client.query("INSERT INTO mt_namespaces (name) VALUES ('prune') ON CONFLICT DO NOTHING");
    await client.query(
      'INSERT INTO mt_runs (id, namespace, interaction, interaction_version, versions, inputs, status, created_at, updated_at) ' +
        "SELECT gen_random_uuid(), 'prune', 'i', 1, '[]', '{}', 'Completed', now() - interval '2 days', now() - interval '2 days' " +
        'FROM generate_series(1, 120)',
    );
    // Every delete of runs takes longer than PRUNE_BATCH_MS, whatever its size.
    await client.query(
      'CREATE FUNCTION slow_delete() RETURNS trigger LANGUAGE plpgsql AS ' +
        `$$BEGIN PERFORM pg_sleep(${(PRUNE_BATCH_MS + 20) / 1000}); RETURN NULL; END$$`,
    );
    await client.query(
      'CREATE TRIGGER slow_delete AFTER DELETE ON mt_runs FOR EACH STATEMENT EXECUTE FUNCTION slow_delete()',
    );
    const batches: { table: string; rows: number; ms: number }[] = [];
    try {
      const result = await pruneBefore(db, new Date(Date.now() - 86_400_000), {
        batchSize: 200,
        onBatch: (batch) => batches.push(batch),
      });
      expect(result.runs).toBe(120);
      const runs = batches.filter((b) => b.table === 'mt_runs');
      expect(runs.map((b) => b.rows)).toEqual([PRUNE_FIRST_BATCH_SIZE, 25, 12, PRUNE_MIN_BATCH_SIZE, 10, 10, 3]);
      expect(runs.every((b) => b.ms > PRUNE_BATCH_MS)).toBe(true);
      expect(
        Number((await client.query("SELECT count(*) AS n FROM mt_runs WHERE namespace = 'prune'")).rows[0].n),
      ).toBe(0);
    } finally {
      await client.query('DROP TRIGGER slow_delete ON mt_runs');
      await client.query('DROP FUNCTION slow_delete()');
    }
  });
});
