import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { recordAudit } from '../audit/audit.js';
import type { Db, Queryable } from '../db/db.js';
import { storeErrors } from '../errors.js';

/** One numbered migration file of `sql/`. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
  /**
   * The oldest schema level a release must know to still run on a database this migration was applied to (its
   * first line, `-- mt: compatible-from N`). An expand step (additive: a release before it keeps working) names the
   * level before it; a contract step (a release before it cannot run on it) names its own version.
   */
  compatibleFrom: number;
}

/** Where a database stands against the migrations a binary knows. */
export interface SchemaStatus {
  /** The highest migration this binary knows. */
  known: number;
  /** The highest migration applied to the database (0 for an empty one). */
  found: number;
  /** The known migrations not applied yet, in order. */
  pending: number[];
  /**
   * The oldest schema level a release must know to run on this database: the highest `compatible-from` of the
   * migrations applied (0 for an empty one). This binary can run on it when `required <= known`.
   */
  required: number;
}

// The package's sql/ folder, found through the package's name, not `import.meta.url`: the `mt` executable runs a
// bundle of this code (packages/cli/dist/bundle), whose address is the CLI's. From src/ or dist/ the name resolves to
// this package itself, from the CLI's bundle to the CLI's own dependency on it.
const SQL_DIR = join(dirname(createRequire(import.meta.url).resolve('@maitento/store/package.json')), 'sql');

// Any constant works; it only has to be the same for every Maitento process on a database.
const MIGRATION_LOCK = 7_357_001;

const HEADER = /^-- mt: compatible-from (\d+)\b/;

/** Reads the numbered migrations shipped in the package's `sql/` folder (or `dir`), in order. */
export function loadMigrations(dir: string = SQL_DIR): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{4}_[a-z0-9_-]+\.sql$/.test(file))
    .sort()
    .map((file) => {
      const sql = readFileSync(`${dir}/${file}`, 'utf8');
      const version = Number(file.slice(0, 4));
      const header = HEADER.exec(sql);
      // Every migration says what it asks of the release before it (packages/store/test/migrations.test.ts checks
      // each shipped file); one that does not is taken as a contract step, the safe reading.
      const compatibleFrom = header === null ? version : Number(header[1]);
      if (compatibleFrom > version) throw new Error(`${file}: compatible-from ${compatibleFrom} is after the file`);
      return { version, name: file, sql, compatibleFrom };
    });
}

interface AppliedRow {
  version: number;
  compatible_from?: number | null;
}

/** The rows of `mt_migrations`, read without DDL (none when the table does not exist yet). */
async function appliedRows(q: Queryable): Promise<AppliedRow[]> {
  const { rows: exists } = await q.query<{ found: string | null }>(
    "SELECT to_regclass('mt_migrations')::text AS found",
  );
  if (exists[0]?.found == null) return [];
  // `*`: the compatible_from column exists only once a release that writes it has migrated.
  const { rows } = await q.query<AppliedRow>('SELECT * FROM mt_migrations ORDER BY version');
  return rows;
}

function statusOf(rows: AppliedRow[], migrations: Migration[]): SchemaStatus {
  const byVersion = new Map(migrations.map((m) => [m.version, m]));
  const applied = new Set(rows.map((row) => row.version));
  const known = migrations.at(-1)?.version ?? 0;
  const found = rows.at(-1)?.version ?? 0;
  let required = 0;
  for (const row of rows) {
    // What this binary's own file says for a migration it knows; what the release that applied it stored for one it
    // does not (none stored: a release before compatible-from existed, which could not run on anything newer).
    const level = byVersion.get(row.version)?.compatibleFrom ?? row.compatible_from ?? row.version;
    required = Math.max(required, level);
  }
  const pending = migrations.filter((m) => !applied.has(m.version)).map((m) => m.version);
  return { known, found, pending, required };
}

function refuseIncompatible(status: SchemaStatus): void {
  if (status.required > status.known) {
    throw storeErrors.create('api:store:schema-newer', {
      found: status.found,
      known: status.known,
      required: status.required,
    });
  }
}

/** Where the database stands against `migrations`, read-only (no lock, no DDL). */
export async function schemaStatus(db: Queryable, migrations: Migration[] = loadMigrations()): Promise<SchemaStatus> {
  return statusOf(await appliedRows(db), migrations);
}

/**
 * For a process that must not migrate (`MT_MIGRATE=off`): refuses a database it cannot run on, with
 * `api:store:schema-newer` when a newer release made a contract step past what this binary knows, and with
 * `api:store:migrations-pending` when this binary's own migrations are not applied yet (run `mt migrate`).
 */
export async function checkSchema(db: Queryable, migrations: Migration[] = loadMigrations()): Promise<SchemaStatus> {
  const status = await schemaStatus(db, migrations);
  refuseIncompatible(status);
  if (status.pending.length > 0) {
    throw storeErrors.create('api:store:migrations-pending', {
      pending: `migrations ${status.pending.join(', ')} are not applied (the schema is at ${status.found}, this release needs ${status.known})`,
    });
  }
  return status;
}

/**
 * Brings the schema up to date: every missing migration, in one transaction under an advisory lock,
 * so several processes starting at once on an empty database apply each migration exactly once.
 * A database a newer release migrated is fine as long as its steps since this binary's last are expands
 * (their `compatible-from` is at most what this binary knows); past a contract step it is refused.
 * When nothing is missing it writes nothing and runs no DDL, so a role without CREATE may call it.
 * Returns the versions it applied.
 */
export async function migrate(db: Db, migrations: Migration[] = loadMigrations()): Promise<number[]> {
  // On PostgreSQL without a pooler (Db.direct): a long transaction of DDL, not one a pooler may cut short.
  return (db.direct ?? db).transaction(async (tx) => {
    // `exec`, without a deadline: another process may be migrating a large database meanwhile.
    await tx.exec(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    const status = statusOf(await appliedRows(tx), migrations);
    refuseIncompatible(status);
    if (status.pending.length === 0) return [];
    await tx.exec(
      'CREATE TABLE IF NOT EXISTS mt_migrations (version integer PRIMARY KEY, name text NOT NULL, ' +
        'applied_at timestamptz NOT NULL DEFAULT now(), compatible_from integer)',
    );
    // A table made by a release before compatible-from: the column is added (nullable, an expand step of its own).
    await tx.exec('ALTER TABLE mt_migrations ADD COLUMN IF NOT EXISTS compatible_from integer');
    const pending = new Set(status.pending);
    const done: number[] = [];
    for (const migration of migrations) {
      if (!pending.has(migration.version)) continue;
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO mt_migrations (version, name, compatible_from) VALUES ($1, $2, $3)', [
        migration.version,
        migration.name,
        migration.compatibleFrom,
      ]);
      done.push(migration.version);
    }
    // Recorded as the system's, in the same transaction, once the audit log exists (schema 22; a test's own set of
    // migrations may have none).
    const { rows } = await tx.query<{ found: string | null }>("SELECT to_regclass('mt_audit')::text AS found");
    if (rows[0]?.found != null) {
      await recordAudit(tx, {
        actor: { kind: 'system', via: 'migrate' },
        requestId: null,
        namespace: 'default',
        action: 'schema.migrated',
        target: { kind: 'schema', id: String(done.at(-1)) },
        before: { version: status.found },
        after: { version: done.at(-1), applied: done },
      });
    }
    return done;
  });
}
