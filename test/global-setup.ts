import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { createPgDb } from '../packages/store/src/db/pg-db.js';
import { migrate } from '../packages/store/src/migrations/migrate.js';
import { MIGRATED_TEMPLATE_ENV, TEST_SERVER_URL } from '../packages/testkit/src/database.js';
import { RUN_DIR_ENV } from './support/packed.js';

const SQL_DIR = new URL('../packages/store/sql/', import.meta.url);
// Any constant: only the suites making a template at the same moment (several worktrees) share it.
const TEMPLATE_LOCK = 7_357_022;

/**
 * The template's name: what it holds is Maitento's migrations and pg-boss's schema, so it is keyed by the
 * migrations' text and pg-boss's version. A new migration (or pg-boss) makes a new template; one already made
 * for the same files is reused, by this run or the next.
 */
function templateName(): string {
  const hash = createHash('sha256');
  for (const file of readdirSync(SQL_DIR).sort()) hash.update(file).update(readFileSync(new URL(file, SQL_DIR)));
  const require = createRequire(import.meta.url);
  hash.update(JSON.parse(readFileSync(require.resolve('pg-boss/package.json'), 'utf8')).version as string);
  return `mt_template_${hash.digest('hex').slice(0, 16)}`;
}

function urlOf(database: string): string {
  const url = new URL(TEST_SERVER_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

/**
 * Makes the migrated template database once (under an advisory lock, made aside and renamed into place, so a
 * suite never copies a half-made one), then closes it to connections: PostgreSQL copies a template only while
 * nobody is connected to it.
 */
async function makeTemplate(admin: pg.Client, name: string): Promise<void> {
  await admin.query(`SELECT pg_advisory_lock(${TEMPLATE_LOCK})`);
  try {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount) return;
    const making = `${name}_making`;
    await admin.query(`DROP DATABASE IF EXISTS "${making}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${making}"`);
    const db = createPgDb(urlOf(making));
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
    // pg-boss's own schema, as `openRunQueue` would make it; no queue (the engine creates its queue, and moves the
    // jobs of an earlier version's queue, on a database without one: durability.test.ts checks that).
    const boss = new PgBoss({ connectionString: urlOf(making), schedule: false, supervise: false });
    boss.on('error', () => {});
    await boss.start();
    await boss.stop({ graceful: false, wait: true });
    await admin.query(`ALTER DATABASE "${making}" RENAME TO "${name}"`);
    await admin.query(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`);
  } finally {
    await admin.query(`SELECT pg_advisory_unlock(${TEMPLATE_LOCK})`);
  }
}

// Runs once before any test file (vitest.config.ts `globalSetup`): the suite needs a PostgreSQL server, and
// without one every file used to fail on its own with a bare ECONNREFUSED. One clear message instead. Then the
// migrated template that `createTestDatabase(prefix, { migrated: true })` copies (MT_TEST_PG_TEMPLATE, inherited
// by the test workers): a copy takes ~0.1 s where migrating an empty database and making pg-boss's schema take
// ~0.4 s (docs/performance.md at 3251c0c, "Where the test suite's time goes").
export default async function setup(): Promise<() => void> {
  const client = new pg.Client({ connectionString: TEST_SERVER_URL, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (error) {
    const url = new URL(TEST_SERVER_URL);
    if (url.password) url.password = '***';
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    const message =
      `The tests need a PostgreSQL server (15 or newer) and could not connect to ${url} (${reason}). ` +
      'Start one there (for example `docker run -d -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:15`), ' +
      'or point MT_TEST_PG_URL at one whose user may create databases (README.md, Tests).';
    // Said once and stopped here: thrown, vitest would add "No test files found" and a stack to it.
    console.error(`\n${message}\n`);
    await client.end().catch(() => {});
    process.exit(1);
  }
  try {
    const name = templateName();
    await makeTemplate(client, name);
    process.env[MIGRATED_TEMPLATE_ENV] = name;
  } finally {
    await client.end().catch(() => {});
  }
  // A folder of this run's own, for what test files make once and share (test/support/packed.ts), removed when
  // the run ends.
  const runDir = mkdtempSync(join(tmpdir(), 'mt-test-run-'));
  process.env[RUN_DIR_ENV] = runDir;
  return () => rmSync(runDir, { recursive: true, force: true });
}
