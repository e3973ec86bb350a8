import { join } from 'node:path';
import {
  bootstrap,
  createApiKey,
  DEFAULT_DATA_DIR,
  DEFAULT_NAMESPACE,
  findNamespace,
  migrate,
  openDatabase,
  storeErrors,
} from '@maitento/store';
import { databaseUrlFromEnv } from './settings.js';

/** Options of {@link createAdminKey}; the database is found as `startServer` finds it. */
export interface CreateAdminKeyOptions {
  /** PostgreSQL; default `DATABASE_URL`. Without one, the PGlite data folder `dataDir`. */
  databaseUrl?: string;
  /** The PGlite data folder, as `mt serve --data` (default `.maitento/data`). */
  dataDir?: string;
  /** The namespace the key is for (default `default`, the operator's). */
  namespace?: string;
  /** A label for the key, shown by `mt key-list`. */
  name?: string;
}

/** An admin key made straight in the database; `key` is shown this once. */
export interface CreatedAdminKey {
  namespace: string;
  key: string;
  /** True when the database was empty and this is the first admin key of namespace `default`. */
  bootstrapped: boolean;
}

/**
 * Makes a new admin key by writing to the database directly, with no server and no other key: the way
 * back in for an operator who has the database but has lost every admin key. Migrates the database
 * first, as `mt serve` does; on an empty one it makes namespace `default` and its first key.
 * A namespace that does not exist is `api:namespaces:not-found`.
 */
export async function createAdminKey(options: CreateAdminKeyOptions = {}): Promise<CreatedAdminKey> {
  const databaseUrl = options.databaseUrl ?? databaseUrlFromEnv();
  const namespace = options.namespace ?? DEFAULT_NAMESPACE;
  const db = await openDatabase(
    databaseUrl
      ? { databaseUrl, applicationName: 'mt-admin-key-create' }
      : { dataDir: join(options.dataDir ?? DEFAULT_DATA_DIR, 'pglite') },
  );
  try {
    await migrate(db);
    if (namespace === DEFAULT_NAMESPACE) {
      const boot = await bootstrap(db);
      if (boot.created && boot.key) return { namespace, key: boot.key, bootstrapped: true };
    }
    if ((await findNamespace(db, namespace)) === undefined) {
      throw storeErrors.create('api:namespaces:not-found', { name: namespace });
    }
    const created = await createApiKey(db, namespace, { role: 'admin', name: options.name ?? 'admin-key-create' });
    return { namespace, key: created.key, bootstrapped: false };
  } finally {
    await db.close();
  }
}
