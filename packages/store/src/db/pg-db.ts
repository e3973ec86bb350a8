import pg from 'pg';
import type { Db, Queryable, QueryResult } from './db.js';

function wrap(client: pg.Pool | pg.PoolClient): Queryable {
  return {
    async query<R>(text: string, params: unknown[] = []): Promise<QueryResult<R>> {
      const result = await client.query(text, params);
      return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
    },
    async exec(sql: string): Promise<void> {
      // The simple-query protocol (no parameters) accepts several statements at once.
      await client.query(sql);
    },
  };
}

/** Opens a {@link Db} on a PostgreSQL server through a `pg` Pool. */
export function createPgDb(connectionString: string, options: { max?: number } = {}): Db {
  const pool = new pg.Pool({ connectionString, max: options.max ?? 10 });
  // An idle client that loses its connection emits on the pool; without a listener Node would crash.
  pool.on('error', () => {});
  const base = wrap(pool);
  return {
    driver: 'pg',
    connectionString,
    query: base.query,
    exec: base.exec,
    async executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> {
      // A multi-statement query answers an array of results; every statement's rows are kept.
      const result = (await pool.query(text, values)) as pg.QueryResult | pg.QueryResult[];
      return { rows: Array.isArray(result) ? result.flatMap((r) => r.rows ?? []) : result.rows };
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn(wrap(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    async close(): Promise<void> {
      await pool.end();
    },
  };
}
