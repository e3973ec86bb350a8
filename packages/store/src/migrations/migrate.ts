import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Db } from '../db/db.js';
import { storeErrors } from '../errors.js';

/** One numbered migration file of `sql/`. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

// The package's sql/ folder, found through the package's name, not `import.meta.url`: the `mt` executable runs a
// bundle of this code (packages/cli/dist/bundle), whose address is the CLI's. From src/ or dist/ the name resolves to
// this package itself, from the CLI's bundle to the CLI's own dependency on it.
const SQL_DIR = join(dirname(createRequire(import.meta.url).resolve('@maitento/store/package.json')), 'sql');

// Any constant works; it only has to be the same for every Maitento process on a database.
const MIGRATION_LOCK = 7_357_001;

/** Reads the numbered migrations shipped in the package's `sql/` folder, in order. */
export function loadMigrations(dir: string = SQL_DIR): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{4}_[a-z0-9_-]+\.sql$/.test(file))
    .sort()
    .map((file) => ({ version: Number(file.slice(0, 4)), name: file, sql: readFileSync(`${dir}/${file}`, 'utf8') }));
}

/**
 * Brings the schema up to date: every missing migration, in one transaction under an advisory lock,
 * so several processes starting at once on an empty database apply each migration exactly once.
 * Returns the versions it applied.
 */
export async function migrate(db: Db, migrations: Migration[] = loadMigrations()): Promise<number[]> {
  // On PostgreSQL without a pooler (Db.direct): a long transaction of DDL, not one a pooler may cut short.
  return (db.direct ?? db).transaction(async (tx) => {
    // `exec`, without a deadline: another process may be migrating a large database meanwhile.
    await tx.exec(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    await tx.exec(
      'CREATE TABLE IF NOT EXISTS mt_migrations (version integer PRIMARY KEY, name text NOT NULL, ' +
        'applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const { rows } = await tx.query<{ version: number }>('SELECT version FROM mt_migrations ORDER BY version');
    const applied = new Set(rows.map((row) => row.version));
    const known = migrations.at(-1)?.version ?? 0;
    const found = rows.at(-1)?.version ?? 0;
    if (found > known) throw storeErrors.create('api:store:schema-newer', { found, known });
    const done: number[] = [];
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO mt_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      done.push(migration.version);
    }
    return done;
  });
}
