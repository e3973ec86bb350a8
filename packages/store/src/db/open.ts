import type { Db } from './db.js';
import { createPgDb } from './pg-db.js';
import { createPgliteDb } from './pglite-db.js';

/** Where the data lives: a PostgreSQL server (`databaseUrl`) or an embedded PGlite folder (`dataDir`). */
export interface OpenDatabaseOptions {
  databaseUrl?: string;
  /** PGlite data folder, used when `databaseUrl` is absent; default `.maitento/data`. */
  dataDir?: string;
  /** PostgreSQL's `application_name` of the process's connections (`mt-serve`, `mt-worker`). */
  applicationName?: string;
}

/** The PGlite data folder used when none is given. */
export const DEFAULT_DATA_DIR = '.maitento/data';

/** Opens PostgreSQL when a URL is given, else PGlite in the data folder. */
export async function openDatabase(options: OpenDatabaseOptions = {}): Promise<Db> {
  if (options.databaseUrl) return createPgDb(options.databaseUrl, { applicationName: options.applicationName });
  return createPgliteDb(options.dataDir ?? DEFAULT_DATA_DIR);
}
