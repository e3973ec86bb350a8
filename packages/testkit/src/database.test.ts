import { readdirSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, MIGRATED_TEMPLATE_ENV } from './database.js';

async function tablesOf(url: string): Promise<{ versions: number[]; pgboss: boolean }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      "SELECT table_schema || '.' || table_name AS name FROM information_schema.tables WHERE table_schema IN ('public', 'pgboss')",
    );
    const names = rows.map((r) => r.name);
    const versions = names.includes('public.mt_migrations')
      ? (await client.query<{ version: number }>('SELECT version FROM mt_migrations ORDER BY version')).rows.map(
          (r) => r.version,
        )
      : [];
    return { versions, pgboss: names.some((n) => n.startsWith('pgboss.')) };
  } finally {
    await client.end();
  }
}

// The numbered migrations of packages/store/sql.
const MIGRATIONS = readdirSync(new URL('../../store/sql/', import.meta.url))
  .filter((file) => /^\d{4}_.*\.sql$/.test(file))
  .map((file) => Number(file.slice(0, 4)))
  .sort((a, b) => a - b);

describe('createTestDatabase', () => {
  it('copies the migrated template of test/global-setup.ts when asked, else makes an empty database', async () => {
    // The suite's global set-up made the template and named it.
    expect(process.env[MIGRATED_TEMPLATE_ENV]).toMatch(/^mt_template_[0-9a-f]{16}$/);
    const migrated = await createTestDatabase('mt_testkit_migrated', { migrated: true });
    const empty = await createTestDatabase('mt_testkit_empty');
    try {
      // Every migration of packages/store/sql and pg-boss's schema: a migrate() after it finds nothing to do.
      expect(await tablesOf(migrated.url)).toEqual({ versions: MIGRATIONS, pgboss: true });
      expect(await tablesOf(empty.url)).toEqual({ versions: [], pgboss: false });
    } finally {
      await migrated.drop();
      await empty.drop();
    }
  });
});
