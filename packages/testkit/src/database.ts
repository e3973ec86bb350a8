import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The PostgreSQL server tests use; override with `MT_TEST_PG_URL`. */
export const TEST_SERVER_URL = process.env.MT_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A database made for one test file, dropped by `drop()`. */
export interface TestDatabase {
  /** Connection string of the new database. */
  url: string;
  name: string;
  /** Drops the database, ending its connections first. */
  drop(): Promise<void>;
}

/**
 * The environment variable naming the migrated template database (test/global-setup.ts makes it once per suite
 * run and sets it: Maitento's migrations and pg-boss's schema applied, nothing else).
 */
export const MIGRATED_TEMPLATE_ENV = 'MT_TEST_PG_TEMPLATE';

/** Options of {@link createTestDatabase}. */
export interface TestDatabaseOptions {
  /**
   * A copy of the migrated template when there is one (`MT_TEST_PG_TEMPLATE`), else an empty database: for a
   * caller that migrates anyway (`migrate`, `mt serve`), whose migration then finds nothing to do. Default false:
   * an empty database, for the tests of the migrations and of a first start.
   */
  migrated?: boolean;
}

/** Creates a database with a unique name on the test server, so test files run in parallel. */
export async function createTestDatabase(prefix = 'mt_test', options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`.toLowerCase();
  const template = options.migrated ? process.env[MIGRATED_TEMPLATE_ENV] : undefined;
  const admin = new pg.Client({ connectionString: TEST_SERVER_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`);
  } finally {
    await admin.end();
  }
  const url = new URL(TEST_SERVER_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: TEST_SERVER_URL });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
