import { createPgDb, type Db, loadMigrations, migrate } from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let database: TestDatabase;
const dbs: Db[] = [];

beforeAll(async () => {
  database = await createTestDatabase('mt_store_migrations');
});

afterAll(async () => {
  await Promise.all(dbs.map((db) => db.close()));
  await database?.drop();
});

describe('migrations', () => {
  it('two migrators starting at once on an empty database apply each migration exactly once', async () => {
    const a = createPgDb(database.url);
    const b = createPgDb(database.url);
    dbs.push(a, b);
    const [doneA, doneB] = await Promise.all([migrate(a), migrate(b)]);
    const all = loadMigrations().map((m) => m.version);
    // One of them applied everything, the other found nothing left to do.
    expect([doneA, doneB].sort((x, y) => y.length - x.length)).toEqual([all, []]);
    const { rows } = await a.query<{ version: number }>('SELECT version FROM mt_migrations ORDER BY version');
    expect(rows.map((row) => row.version)).toEqual(all);
    const tables = await a.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
    );
    expect(tables.rows.map((row) => row.table_name)).toEqual([
      'mt_api_keys',
      'mt_approvals',
      'mt_cache_epoch',
      'mt_cache_members',
      'mt_console_sessions',
      'mt_file_systems',
      'mt_files',
      'mt_idempotency_keys',
      'mt_kb_chunks',
      'mt_kb_documents',
      'mt_key_secret_grants',
      'mt_knowledge_bases',
      'mt_migrations',
      'mt_namespaces',
      'mt_resource_versions',
      'mt_run_events',
      'mt_runs',
      'mt_secrets',
    ]);
  });

  it('running again applies nothing', async () => {
    const db = createPgDb(database.url);
    dbs.push(db);
    expect(await migrate(db)).toEqual([]);
  });

  it('refuses a database migrated by a newer Maitento', async () => {
    const db = createPgDb(database.url);
    dbs.push(db);
    const known = loadMigrations();
    await expect(migrate(db, known.slice(0, 0))).rejects.toMatchObject({ code: 'api:store:schema-newer' });
  });

  it('keeps versions immutable: only enabled may be updated', async () => {
    const db = createPgDb(database.url);
    dbs.push(db);
    await db.query("INSERT INTO mt_namespaces (name) VALUES ('imm')");
    await db.query(
      "INSERT INTO mt_resource_versions (namespace, kind, name, version, hash, resource) VALUES ('imm', 'connector', 'c', 1, 'h', '{}')",
    );
    await db.query("UPDATE mt_resource_versions SET enabled = false WHERE namespace = 'imm'");
    await expect(db.query("UPDATE mt_resource_versions SET hash = 'x' WHERE namespace = 'imm'")).rejects.toThrow(
      /immutable/,
    );
  });
});
