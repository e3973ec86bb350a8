import { checkRunQueueSchema, migrateRunQueueSchema } from '@maitento/engine';
import {
  checkSchema,
  type Db,
  DEFAULT_DATA_DIR,
  grantRuntimeRole,
  migrate,
  openDatabase,
  type SchemaStatus,
  schemaStatus,
} from '@maitento/store';
import { join } from 'node:path';
import { type MigrateMode, migrateModeFromEnv } from './settings.js';

/**
 * What a serving process does with the schema before it starts: `on` migrates Maitento's tables (pg-boss makes its
 * own when the run queue starts); `off` checks both, with no DDL, and refuses with `api:store:migrations-pending` or
 * `api:store:schema-newer`.
 */
export async function prepareSchema(db: Db, mode: MigrateMode = migrateModeFromEnv()): Promise<void> {
  if (mode === 'on') {
    await migrate(db);
    return;
  }
  await checkSchema(db);
  await checkRunQueueSchema(db);
}

/** Options of {@link runMigrations}. */
export interface RunMigrationsOptions {
  /** PostgreSQL, as the role that owns the schema; without one, the PGlite data folder `dataDir`. */
  databaseUrl?: string;
  /** The PGlite data folder, as `mt serve --data` (default `.maitento/data`). */
  dataDir?: string;
  /** Only check (`mt migrate --check`): refuse when anything is pending or the schema is too new; change nothing. */
  check?: boolean;
  /** After migrating, grant this existing role what a serving process needs (`--grant-runtime`). */
  grantRuntime?: string;
}

/** What {@link runMigrations} did or found. */
export interface MigrationsResult {
  status: SchemaStatus;
  /** The versions applied now (none with `check`). */
  applied: number[];
  /** The grant statements run for `grantRuntime`. */
  granted: string[];
}

/**
 * `mt migrate`: applies Maitento's missing migrations and creates or migrates pg-boss's schema (the run queue), as
 * the role given by the URL; with `check`, changes nothing and refuses a database that is not current.
 */
export async function runMigrations(options: RunMigrationsOptions): Promise<MigrationsResult> {
  const db = await openDatabase(
    options.databaseUrl
      ? { databaseUrl: options.databaseUrl, applicationName: 'mt-migrate' }
      : { dataDir: join(options.dataDir ?? DEFAULT_DATA_DIR, 'pglite') },
  );
  try {
    if (options.check) {
      const status = await checkSchema(db);
      await checkRunQueueSchema(db);
      return { status, applied: [], granted: [] };
    }
    const applied = await migrate(db);
    await migrateRunQueueSchema(db);
    const granted = options.grantRuntime === undefined ? [] : await grantRuntimeRole(db, options.grantRuntime);
    return { status: await schemaStatus(db), applied, granted };
  } finally {
    await db.close();
  }
}
