import type { Db } from '../db/db.js';
import { createApiKey } from '../keys/keys.js';
import { DEFAULT_NAMESPACE } from './namespaces.js';

/** What {@link bootstrap} did. */
export interface BootstrapResult {
  /** True when the database was empty and the `default` namespace and its first admin key were made. */
  created: boolean;
  /** The first admin key, when one was made. */
  key?: string;
  /** True when that key was generated (and must be shown once), false when it came from the caller. */
  generated?: boolean;
}

// Held while bootstrapping so two servers starting on one empty database make one first key.
const BOOTSTRAP_LOCK = 7_357_002;

/**
 * On a database with no namespace, creates `default` and a first admin key (`key`, or a random one);
 * on any other database does nothing.
 */
export async function bootstrap(db: Db, options: { key?: string } = {}): Promise<BootstrapResult> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK]);
    const { rows } = await tx.query('SELECT 1 FROM mt_namespaces LIMIT 1');
    if (rows.length > 0) return { created: false };
    await tx.query('INSERT INTO mt_namespaces (name) VALUES ($1)', [DEFAULT_NAMESPACE]);
    const created = await createApiKey(tx, DEFAULT_NAMESPACE, { role: 'admin', name: 'bootstrap', key: options.key });
    return { created: true, key: created.key, generated: options.key === undefined };
  });
}
