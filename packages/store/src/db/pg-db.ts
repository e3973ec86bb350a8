import { isMtError } from '@maitento/errors';
import pg from 'pg';
import { storeErrors } from '../errors.js';
import type { Db, Queryable, QueryOptions, QueryResult } from './db.js';
import { dbPoolMaxFromEnv, pgConnectionConfig, tlsRefusal } from './pg-config.js';

/** How long a statement waits for a connection, and then for its answer, by default (`MT_DB_TIMEOUT_MS`). */
export const DEFAULT_DB_TIMEOUT_MS = 1500;

/** `MT_DB_TIMEOUT_MS` of `env` when it is a positive number of milliseconds, else {@link DEFAULT_DB_TIMEOUT_MS}. */
export function dbTimeoutFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env.MT_DB_TIMEOUT_MS);
  return env.MT_DB_TIMEOUT_MS !== '' && Number.isFinite(value) && value > 0 ? value : DEFAULT_DB_TIMEOUT_MS;
}

/** Options of {@link createPgDb}. */
export interface PgDbOptions {
  /** Most connections of the pool (default `MT_DB_POOL_MAX`, else 10). */
  max?: number;
  /** PostgreSQL's `application_name` of its connections (pg_stat_activity), unless the URL sets one. */
  applicationName?: string;
  /** See {@link DEFAULT_DB_TIMEOUT_MS}; default `MT_DB_TIMEOUT_MS`. */
  timeoutMs?: number;
}

// A failure of the connection rather than of the statement: a timeout, a refused or broken socket, or a server
// that is shutting down or refusing connections (SQLSTATE classes 08 and 57P).
function isConnectionFailure(error: unknown): boolean {
  if (error instanceof pg.DatabaseError) return /^(08|57P)/.test(error.code ?? '');
  return error instanceof Error && !(error instanceof TypeError) && !(error instanceof RangeError);
}

/**
 * Whether PostgreSQL answers, with the listeners told when that changes. Any answer says it does. A failure says
 * it does not only when its statement began after the last answer arrived: a statement that began before then
 * (one that waited out a stall and timed out just after the database came back) says nothing about now, so the
 * state cannot go answering → unreachable → answering on one stall.
 */
function reachability() {
  let reachable = true;
  // Statements begun so far, and how many had begun when the last answer arrived.
  let begun = 0;
  let begunAtLastAnswer = 0;
  const listeners: Array<(reachable: boolean, error?: unknown) => void> = [];
  function set(now: boolean, error?: unknown) {
    if (now === reachable) return;
    reachable = now;
    for (const listener of listeners) listener(now, error);
  }
  return {
    get reachable() {
      return reachable;
    },
    listen(listener: (reachable: boolean, error?: unknown) => void) {
      listeners.push(listener);
    },
    /** Called as a statement begins; its number, given back to {@link answered} or {@link failed}. */
    begin(): number {
      return ++begun;
    },
    answered() {
      begunAtLastAnswer = begun;
      set(true);
    },
    failed(statement: number, error: unknown) {
      if (statement > begunAtLastAnswer) set(false, error);
    },
  };
}

/**
 * `work`, or a rejection with `message` once `deadline` (a `performance.now()` time) has passed. The rejection waits
 * for the event loop's next poll for I/O after the timer fires: when the loop was blocked past the deadline (a long
 * synchronous task, a process that got no CPU on a loaded machine), an answer that arrived meanwhile is read first
 * and wins, rather than being taken for a database that does not answer (pg's own `query_timeout` and a bare timer
 * reject in the timers phase, before any socket is read). The wake-ups' deadline does the same (wake/wakeups.ts).
 */
function beforeDeadline<T>(work: Promise<T>, deadline: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => setImmediate(() => reject(new Error(message))), Math.max(0, deadline - performance.now()));
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * Opens a {@link Db} on a PostgreSQL server through a `pg` Pool. Every statement but `exec` and multi-statement
 * `executeSql` (migrations, job-queue setup) gets a connection and its answer within `timeoutMs` (a statement of
 * a transaction: its answer; the transaction: its connection); past it, or when the connection fails, it fails
 * with `api:store:unavailable` (503).
 */
export function createPgDb(connectionString: string, options: PgDbOptions = {}): Db {
  const timeoutMs = options.timeoutMs ?? dbTimeoutFromEnv();
  // The pool's own timer ends a connection attempt that still hangs; it is longer than the deadline, which is
  // acquire's (a timer of the pool's fires before a connection's answer is read when the loop was blocked).
  // sslmode, sslrootcert and the application name: pg-config.ts, as for every connection of the process.
  const { config, sslmode } = pgConnectionConfig(connectionString, options.applicationName);
  const max = options.max ?? dbPoolMaxFromEnv();
  const pool = new pg.Pool({ ...config, max, connectionTimeoutMillis: 2 * timeoutMs });
  // An idle client that loses its connection emits on the pool; without a listener Node would crash.
  pool.on('error', () => {});
  const state = reachability();

  async function bounded<T>(run: () => Promise<T>): Promise<T> {
    const statement = state.begin();
    try {
      const result = await run();
      state.answered();
      return result;
    } catch (error) {
      if (!isConnectionFailure(error)) {
        // PostgreSQL's own error is an answer; a TypeError or RangeError (a value pg cannot send) says nothing.
        if (error instanceof pg.DatabaseError) state.answered();
        throw error;
      }
      state.failed(statement, error);
      throw tlsRefusal(error, sslmode) ?? storeErrors.create('api:store:unavailable', { timeoutMs }, { cause: error });
    }
  }

  // With a name, pg parses the statement once per connection and then only binds and executes it. Its deadline is
  // `beforeDeadline`'s, not pg's own `query_timeout`, which rejects as its timer fires (see there).
  const bound = (text: string, values: unknown[], name?: string) => ({ text, values, name }) as pg.QueryConfig;

  // A client of the pool by `deadline` (the pool's own wait may add a connection attempt to a wait in its queue).
  async function acquire(deadline: number): Promise<pg.PoolClient> {
    const pending = pool.connect();
    try {
      return await beforeDeadline(pending, deadline, 'no connection of the pool in time');
    } catch (error) {
      pending.then(
        (client) => client.release(),
        () => {},
      );
      throw error;
    }
  }

  // One statement on a client of its own, all of it (the wait for the client too) within the deadline. A statement
  // past it leaves its connection closed (`failed`): it is not handed out again.
  async function statement(text: string, values: unknown[], name?: string): Promise<pg.QueryResult> {
    const deadline = performance.now() + timeoutMs;
    const client = await acquire(deadline);
    let failed: Error | undefined;
    try {
      return await beforeDeadline(client.query(bound(text, values, name)), deadline, 'no answer in time');
    } catch (error) {
      // A connection that failed or did not answer is closed rather than handed out again.
      if (isConnectionFailure(error)) failed = error as Error;
      throw error;
    } finally {
      client.release(failed);
    }
  }

  function wrap(client: pg.PoolClient): Queryable {
    return {
      query<R>(text: string, params: unknown[] = [], options?: QueryOptions): Promise<QueryResult<R>> {
        return bounded(async () => {
          // Past the deadline the transaction fails with api:store:unavailable and its connection is closed.
          const result = await beforeDeadline(
            client.query(bound(text, params, options?.name)),
            performance.now() + timeoutMs,
            'no answer in time',
          );
          return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
        });
      },
      async exec(sql: string): Promise<void> {
        // The simple-query protocol (no parameters) accepts several statements at once.
        await client.query(sql);
      },
    };
  }

  return {
    driver: 'pg',
    connectionString,
    applicationName: options.applicationName,
    query<R>(text: string, params: unknown[] = [], options?: QueryOptions): Promise<QueryResult<R>> {
      return bounded(async () => {
        const result = await statement(text, params, options?.name);
        return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
      });
    },
    async exec(sql: string): Promise<void> {
      await pool.query(sql);
    },
    get reachable() {
      return state.reachable;
    },
    onReachability: state.listen,
    poolStats() {
      return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max };
    },
    async executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> {
      if (values !== undefined) return bounded(() => statement(text, values));
      // A multi-statement query answers an array of results; every statement's rows are kept.
      const result = (await pool.query(text)) as pg.QueryResult | pg.QueryResult[];
      return { rows: Array.isArray(result) ? result.flatMap((r) => r.rows ?? []) : result.rows };
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const client = await bounded(() => acquire(performance.now() + timeoutMs));
      let broken: unknown;
      try {
        const tx = wrap(client);
        await tx.query('BEGIN');
        const result = await fn(tx);
        await tx.query('COMMIT');
        return result;
      } catch (error) {
        // Without a working connection, PostgreSQL rolls the transaction back when the connection is closed.
        if (isMtError(error) && error.code === 'api:store:unavailable') broken = error;
        else await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release(broken as Error | undefined);
      }
    },
    async close(): Promise<void> {
      await pool.end();
    },
  };
}
