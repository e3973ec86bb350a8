import { randomBytes } from 'node:crypto';
import { checkSchema, createPgDb, type Db, loadMigrations, type Migration, migrate } from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import pg from 'pg';
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
      'mt_audit',
      'mt_cache_epoch',
      'mt_cache_members',
      'mt_connect_links',
      'mt_connections',
      'mt_console_sessions',
      'mt_file_systems',
      'mt_files',
      'mt_idempotency_keys',
      'mt_kb_chunks',
      'mt_kb_documents',
      'mt_key_secret_grants',
      'mt_knowledge_bases',
      'mt_limit_slots',
      'mt_migrations',
      'mt_namespace_quotas',
      'mt_namespaces',
      'mt_oauth_clients',
      'mt_people',
      'mt_resource_versions',
      'mt_run_events',
      'mt_runs',
      'mt_schedule_states',
      'mt_schedule_ticks',
      'mt_secrets',
      'mt_trigger_deliveries',
      'mt_trigger_rejections',
      'mt_webhook_deliveries',
      'mt_webhook_endpoints',
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

  it('marks every shipped migration with the oldest schema level a release must know to run on it', () => {
    for (const m of loadMigrations()) {
      expect(m.sql.split('\n')[0]).toMatch(/^-- mt: compatible-from \d+ \((expand|contract): /);
      expect(m.compatibleFrom).toBeLessThanOrEqual(m.version);
      // An expand step names a level before it, a contract step its own.
      expect(m.sql.includes('(contract:')).toBe(m.compatibleFrom === m.version);
    }
  });
});

describe('expand and contract steps of a newer release', () => {
  const known = loadMigrations();
  const last = known.at(-1)?.version ?? 0;
  const step = (version: number, compatibleFrom: number, sql: string): Migration => ({
    version,
    name: `${String(version).padStart(4, '0')}_next.sql`,
    sql: `-- mt: compatible-from ${compatibleFrom}\n${sql}`,
    compatibleFrom,
  });
  let upgraded: TestDatabase;

  beforeAll(async () => {
    upgraded = await createTestDatabase('mt_store_upgrades', { migrated: true });
  });
  afterAll(async () => {
    await upgraded?.drop();
  });

  it('after an expand step of the next release, this release migrates (nothing to do) and passes the check', async () => {
    const db = createPgDb(upgraded.url);
    dbs.push(db);
    expect(await migrate(db)).toEqual([]);
    const next = [...known, step(last + 1, last, 'ALTER TABLE mt_runs ADD COLUMN next_note text;')];
    expect(await migrate(db, next)).toEqual([last + 1]);
    // This release, which does not know last + 1: it still runs on the database.
    expect(await migrate(db, known)).toEqual([]);
    expect(await checkSchema(db, known)).toMatchObject({ known: last, found: last + 1, pending: [] });
    const { rows } = await db.query<{ compatible_from: number }>(
      'SELECT compatible_from FROM mt_migrations WHERE version = $1',
      [last + 1],
    );
    expect(rows).toEqual([{ compatible_from: last }]);
  });

  it('after a contract step, this release is refused with the schema level it needs', async () => {
    const db = createPgDb(upgraded.url);
    dbs.push(db);
    const next = [
      ...known,
      step(last + 1, last, 'ALTER TABLE mt_runs ADD COLUMN next_note text;'),
      step(last + 2, last + 2, 'ALTER TABLE mt_runs DROP COLUMN next_note;'),
    ];
    expect(await migrate(db, next)).toEqual([last + 2]);
    for (const attempt of [() => migrate(db, known), () => checkSchema(db, known)]) {
      await expect(attempt()).rejects.toMatchObject({
        code: 'api:store:schema-newer',
        message: expect.stringContaining(
          `needs a release that knows schema ${last + 2} or later, and this one knows ${last}`,
        ),
      });
    }
    // The release that made the step runs on it.
    expect(await migrate(db, next)).toEqual([]);
  });

  it('checkSchema refuses an unmigrated database with the migrations pending, without creating anything', async () => {
    const empty = await createTestDatabase('mt_store_unmigrated');
    const db = createPgDb(empty.url);
    try {
      await expect(checkSchema(db)).rejects.toMatchObject({
        code: 'api:store:migrations-pending',
        message: expect.stringContaining(`this release needs ${last}`),
      });
      const { rows } = await db.query("SELECT to_regclass('mt_migrations') AS found");
      expect(rows).toEqual([{ found: null }]);
    } finally {
      await db.close();
      await empty.drop();
    }
  });

  it('a role without CREATE starts on a current schema: migrate() runs no DDL when nothing is pending', async () => {
    const role = `mt_no_ddl_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: upgraded.url });
    await admin.connect();
    await admin.query(`CREATE ROLE ${role} LOGIN`);
    await admin.query(`GRANT SELECT ON mt_migrations TO ${role}`);
    const url = new URL(upgraded.url);
    url.username = role;
    const db = createPgDb(url.toString());
    try {
      const { rows } = await db.query<{ create: boolean }>("SELECT has_schema_privilege('public', 'CREATE') AS create");
      expect(rows).toEqual([{ create: false }]);
      // The database holds the contract step above: a binary that knows it.
      const next = [
        ...known,
        step(last + 1, last, 'ALTER TABLE mt_runs ADD COLUMN next_note text;'),
        step(last + 2, last + 2, 'ALTER TABLE mt_runs DROP COLUMN next_note;'),
      ];
      expect(await migrate(db, next)).toEqual([]);
    } finally {
      await db.close();
      await admin.query(`DROP OWNED BY ${role}`);
      await admin.query(`DROP ROLE ${role}`);
      await admin.end();
    }
  });
});
