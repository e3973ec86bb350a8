import { mkdirSync } from 'node:fs';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import type { Db, Queryable, QueryResult } from './db.js';

function wrap(target: PGlite | Transaction): Queryable {
  return {
    async query<R>(text: string, params: unknown[] = []): Promise<QueryResult<R>> {
      const result = await target.query<R>(text, params);
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
    },
    async exec(sql: string): Promise<void> {
      await target.exec(sql);
    },
  };
}

/**
 * Opens a {@link Db} on an embedded PGlite database kept in `dataDir` (in memory when omitted).
 * PGlite is one connection: its own mutex runs one transaction at a time, which serialises deploys.
 */
export async function createPgliteDb(dataDir?: string): Promise<Db> {
  if (dataDir !== undefined) mkdirSync(dataDir, { recursive: true });
  const pglite = await PGlite.create(dataDir);
  const base = wrap(pglite);
  return {
    driver: 'pglite',
    query: base.query,
    exec: base.exec,
    transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      return pglite.transaction((tx) => fn(wrap(tx)));
    },
    async close(): Promise<void> {
      await pglite.close();
    },
  };
}
