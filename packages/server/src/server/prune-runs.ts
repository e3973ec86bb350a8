import { join } from 'node:path';
import { DEFAULT_DATA_DIR, migrate, openDatabase, type PruneResult, pruneBefore } from '@maitento/store';
import { databaseUrlFromEnv } from './settings.js';

/** Options of {@link pruneRuns}; the database is found as `startServer` finds it. */
export interface PruneRunsOptions {
  /** PostgreSQL; default `DATABASE_URL`. Without one, the PGlite data folder `dataDir`. */
  databaseUrl?: string;
  /** The PGlite data folder, as `mt serve --data` (default `.maitento/data`). */
  dataDir?: string;
  /** Runs (with their trees) and approvals that ended before this instant are deleted. */
  before: Date;
}

/**
 * `mt runs-prune`: deletes, straight in the database, what ended before `before` (the retention job's pass with
 * the operator's cutoff, docs/operations.md "Data lifecycle"), in the same short batches: a serving process may run.
 */
export async function pruneRuns(options: PruneRunsOptions): Promise<PruneResult> {
  const databaseUrl = options.databaseUrl ?? databaseUrlFromEnv();
  const db = await openDatabase(
    databaseUrl ? { databaseUrl } : { dataDir: join(options.dataDir ?? DEFAULT_DATA_DIR, 'pglite') },
  );
  try {
    await migrate(db);
    return await pruneBefore(db, options.before, { via: 'runs-prune' });
  } finally {
    await db.close();
  }
}
