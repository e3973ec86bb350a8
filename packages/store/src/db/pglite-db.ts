import { mkdirSync } from 'node:fs';
import type { PGlite, Transaction } from '@electric-sql/pglite';
import { lockDataDir } from './data-lock.js';
import type { Db, Queryable, QueryResult } from './db.js';

// Statements that may have written, counted once they finished (a transaction once more when it ended).
interface WriteCount {
  writes: number;
}

const READ_ONLY = /^\s*select\b/i;

function wrap(target: PGlite | Transaction, count: WriteCount): Queryable {
  return {
    async query<R>(text: string, params: unknown[] = []): Promise<QueryResult<R>> {
      const result = await target.query<R>(text, params);
      if (!READ_ONLY.test(text)) count.writes++;
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
    },
    async exec(sql: string): Promise<void> {
      await target.exec(sql);
      count.writes++;
    },
  };
}

/**
 * Opens a {@link Db} on an embedded PGlite database kept in `dataDir` (in memory when omitted).
 * PGlite is one connection: its own mutex runs one transaction at a time, which serialises deploys.
 * A data folder is locked (`<dataDir>.lock`) while open, so a second process cannot open it too.
 */
export async function createPgliteDb(dataDir?: string): Promise<Db> {
  let release = () => {};
  if (dataDir !== undefined) {
    mkdirSync(dataDir, { recursive: true });
    release = lockDataDir(dataDir);
  }
  let pglite: PGlite;
  try {
    // Imported here, not with the store: a server on PostgreSQL never loads PGlite's JavaScript.
    const { PGlite } = await import('@electric-sql/pglite');
    pglite = await PGlite.create(dataDir);
  } catch (error) {
    release();
    throw error;
  }
  const count: WriteCount = { writes: 0 };
  const base = wrap(pglite, count);
  return {
    driver: 'pglite',
    query: base.query,
    exec: base.exec,
    // One process's embedded database: there is no connection to lose, and every write goes through here.
    reachable: true,
    onReachability: () => {},
    writes: () => count.writes,
    async executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> {
      if (values !== undefined && values.length > 0) {
        const { rows } = await pglite.query(text, values);
        if (!READ_ONLY.test(text)) count.writes++;
        return { rows };
      }
      // Parameterless SQL may hold several statements (BEGIN ... RETURNING ... COMMIT): `exec` answers
      // one result per statement, and a RETURNING in the middle must not be lost behind the COMMIT.
      try {
        const results = await pglite.exec(text);
        count.writes++;
        return { rows: results.flatMap((r) => r.rows ?? []) };
      } catch (error) {
        // One connection: a failed statement inside BEGIN would poison every later query.
        await pglite.query('ROLLBACK').catch(() => {});
        throw error;
      }
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      try {
        return await pglite.transaction((tx) => fn(wrap(tx, count)));
      } finally {
        count.writes++;
      }
    },
    async listen(channel: string, fn: (payload: string) => void): Promise<() => Promise<void>> {
      const unlisten = await pglite.listen(channel, fn);
      return () => unlisten();
    },
    async close(): Promise<void> {
      try {
        await pglite.close();
      } finally {
        release();
      }
    },
  };
}
