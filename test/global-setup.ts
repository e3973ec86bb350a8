import pg from 'pg';
import { TEST_SERVER_URL } from '../packages/testkit/src/database.js';

// Runs once before any test file (vitest.config.ts `globalSetup`): the suite needs a PostgreSQL server, and
// without one every file used to fail on its own with a bare ECONNREFUSED. One clear message instead.
export default async function checkPostgres(): Promise<void> {
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
    process.exit(1);
  } finally {
    await client.end().catch(() => {});
  }
}
