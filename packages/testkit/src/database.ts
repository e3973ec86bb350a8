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

/**
 * The environment variable carrying the suite run's tag (test/global-setup.ts sets it): a database made under it
 * has the tag in its name and is dropped by the run's teardown, all at once, instead of by the file that made it.
 * PostgreSQL 15's `DROP DATABASE` forces a checkpoint and waits for it: dropped one by one while other files run,
 * each of the ~110 drops of a run flushed every dirty buffer of the server (docs/performance.md, "The suite's
 * PostgreSQL").
 */
export const RUN_TAG_ENV = 'MT_TEST_RUN_TAG';

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
  const tag = process.env[RUN_TAG_ENV];
  const name =
    `${prefix}_${tag === undefined ? '' : `${tag}_`}${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`.toLowerCase();
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
      // Under a suite run's tag the run's teardown drops it (dropTaggedDatabases), with the others.
      if (tag !== undefined) return;
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

/**
 * Drops every database made under the run tag `tag` (see {@link RUN_TAG_ENV}), ending their connections; returns
 * how many. Only names holding `_<tag>_` are touched, so suites of other checkouts running beside it keep theirs.
 */
export async function dropTaggedDatabases(tag: string): Promise<number> {
  if (!/^[0-9a-f]{8}$/.test(tag)) throw new Error(`not a run tag: ${tag}`);
  const admin = new pg.Client({ connectionString: TEST_SERVER_URL });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE '%\\_' || $1 || '\\_%'",
      [tag],
    );
    for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    return rows.length;
  } finally {
    await admin.end();
  }
}
