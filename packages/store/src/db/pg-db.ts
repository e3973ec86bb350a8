import { isMtError } from '@maitento/errors';
import pg from 'pg';
import { storeErrors } from '../errors.js';
import { type Db, type Queryable, type QueryOptions, type QueryResult, RELAXED_POOL_MAX } from './db.js';
import { dbPoolMaxFromEnv, pgConnectionConfig, tlsRefusal } from './pg-config.js';

/** How long a statement waits for a connection, and then for its answer, by default (`MT_DB_TIMEOUT_MS`). */
export const DEFAULT_DB_TIMEOUT_MS = 1500;

/** `MT_DB_TIMEOUT_MS` of `env` when it is a positive number of milliseconds, else {@link DEFAULT_DB_TIMEOUT_MS}. */
export function dbTimeoutFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env.MT_DB_TIMEOUT_MS);
  return env.MT_DB_TIMEOUT_MS !== '' && Number.isFinite(value) && value > 0 ? value : DEFAULT_DB_TIMEOUT_MS;
}

/**
 * `MT_DIRECT_DATABASE_URL` of `env`, when set and not `connectionString` itself: PostgreSQL reached without a pooler,
 * for what needs a session of its own (docs/operations.md, "Poolers"). Then `connectionString` is taken to be a pooler's.
 */
export function directUrlFromEnv(connectionString: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const direct = env.MT_DIRECT_DATABASE_URL?.trim();
  return direct === undefined || direct === '' || direct === connectionString ? undefined : direct;
}

/**
 * Whether the store's pool prepares named statements (`MT_DB_PREPARED=on|off`): by default on, and off when the pool
 * goes through a pooler (`pooled`), where a name prepared on one server connection is missing on the next or already
 * there (PgBouncer before 1.21, or without `max_prepared_statements`). Throws `api:store:setting-invalid` otherwise.
 */
export function preparedFromEnv(pooled: boolean, env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.MT_DB_PREPARED?.trim() ?? '';
  if (value === '') return !pooled;
  if (value === 'on' || value === 'off') return value === 'on';
  throw storeErrors.create('api:store:setting-invalid', {
    name: 'MT_DB_PREPARED',
    value,
    reason: 'it is on or off',
  });
}

/** Options of {@link createPgDb}. */
export interface PgDbOptions {
  /**
   * PostgreSQL without a pooler (default `MT_DIRECT_DATABASE_URL`, see {@link directUrlFromEnv}; '' for none). Given, the pool's
   * `connectionString` is a pooler's in transaction mode: see {@link createPgDb}.
   */
  directUrl?: string;
  /** Whether statements named by their caller are prepared under that name (default {@link preparedFromEnv}). */
  prepared?: boolean;
  /** Most connections of the pool (default `MT_DB_POOL_MAX`, else 10). */
  max?: number;
  /** PostgreSQL's `application_name` of its connections (pg_stat_activity), unless the URL sets one. */
  applicationName?: string;
  /** See {@link DEFAULT_DB_TIMEOUT_MS}; default `MT_DB_TIMEOUT_MS`. */
  timeoutMs?: number;
  /** Milliseconds an idle connection of the pool stays open (default pg's, 10 s). */
  idleMs?: number;
  /** Whether a commit waits for the write-ahead log's flush (default true; false: see {@link Db.relaxed}). */
  synchronousCommit?: boolean;
}

// A failure of the connection rather than of the statement: a timeout, a refused or broken socket, or a server
// that is shutting down or refusing connections (SQLSTATE classes 08 and 57P), or the server's own deadline (see
// {@link serverDeadlines}): a statement it cancelled (57014) or a session idle in a transaction it ended (25P03).
function isConnectionFailure(error: unknown): boolean {
  if (error instanceof pg.DatabaseError) return /^(08|57P|57014|25P03)/.test(error.code ?? '');
  return error instanceof Error && !(error instanceof TypeError) && !(error instanceof RangeError);
}

// PostgreSQL's own answer that it ended the statement or the transaction: what it did is undone, for certain.
function isServerDeadline(error: unknown): boolean {
  return error instanceof pg.DatabaseError && (error.code === '57014' || error.code === '25P03');
}

/**
 * The deadlines PostgreSQL itself keeps on every pooled connection (sent in the connection's startup message), so
 * that what the client stopped waiting for is ended by the server too: a statement runs at most 4/5 of `timeoutMs`
 * (the client waits `timeoutMs` for an answer, so a statement that waits on a lock is cancelled by the server, and
 * the client reads that answer, before its own deadline), and a transaction left idle (its client gone, its COMMIT
 * never arrived, its locks still held) is ended after ten times `timeoutMs` (long enough for a process whose event
 * loop was stalled a while between two statements of a transaction).
 */
export function serverDeadlines(timeoutMs: number): {
  statement_timeout: number;
  idle_in_transaction_session_timeout: number;
} {
  return {
    statement_timeout: Math.max(1, Math.floor(timeoutMs * 0.8)),
    idle_in_transaction_session_timeout: Math.max(1, Math.ceil(timeoutMs * 10)),
  };
}

// A statement sent whose answer never came (the deadline passed or the connection broke after it was sent; not an
// error PostgreSQL sent in its place, which is an answer): on its own (autocommit) it may have committed. `bounded` turns it
// into api:store:outcome-unknown.
class Unanswered extends Error {
  constructor(readonly failure: unknown) {
    super('a statement was sent and got no answer', { cause: failure });
  }
}

/** What became of a transaction whose COMMIT got no answer, asked of PostgreSQL on a connection of its own. */
export type CommitOutcome = 'committed' | 'aborted' | 'unknown';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
 *
 * With a direct URL (`directUrl`), `connectionString` names a pooler in transaction mode (PgBouncer, RDS Proxy,
 * Supavisor), where consecutive transactions of one client connection may run on different server connections and a
 * startup parameter other than a few is refused. Then the pool sends no server deadline at startup: each transaction
 * sets them with `SET LOCAL` in BEGIN's round trip (a single statement outside a transaction has the client's deadline
 * only); statements are not prepared under a name unless `prepared`; and what needs a session of its own or runs long
 * goes to the direct URL: {@link Db.direct} (migrations), the settling of a lost COMMIT, and the wake-up LISTEN
 * connection (wake/wakeups.ts).
 */
export function createPgDb(connectionString: string, options: PgDbOptions = {}): Db {
  const timeoutMs = options.timeoutMs ?? dbTimeoutFromEnv();
  const directUrl = (options.directUrl ?? directUrlFromEnv(connectionString)) || undefined;
  const pooled = directUrl !== undefined && directUrl !== connectionString;
  const prepared = options.prepared ?? preparedFromEnv(pooled);
  // The pool's own timer ends a connection attempt that still hangs; it is longer than the deadline, which is
  // acquire's (a timer of the pool's fires before a connection's answer is read when the loop was blocked).
  // sslmode, sslrootcert and the application name: pg-config.ts, as for every connection of the process.
  const { config, sslmode } = pgConnectionConfig(connectionString, options.applicationName);
  // The connections that settle a lost COMMIT: the direct URL's (they send the server's deadlines at startup).
  const session = pooled ? pgConnectionConfig(directUrl, options.applicationName).config : config;
  const max = options.max ?? dbPoolMaxFromEnv();
  const deadlines = serverDeadlines(timeoutMs);
  const pool = new pg.Pool({
    ...config,
    max,
    ...(options.idleMs === undefined ? {} : { idleTimeoutMillis: options.idleMs }),
    connectionTimeoutMillis: 2 * timeoutMs,
    ...(pooled ? {} : deadlines),
    // A startup parameter like the deadlines (never through a pooler: `relaxed` is not made there).
    ...(options.synchronousCommit === false
      ? { options: [config.options, '-c synchronous_commit=off'].filter(Boolean).join(' ') }
      : {}),
  });
  // Through a pooler the server's deadlines hold for the transaction that sets them, in BEGIN's round trip.
  const begin = pooled
    ? `BEGIN; SET LOCAL statement_timeout = ${deadlines.statement_timeout}; SET LOCAL idle_in_transaction_session_timeout = ${deadlines.idle_in_transaction_session_timeout}; SELECT pg_current_xact_id()::text AS xid, pg_backend_pid() AS pid`
    : 'BEGIN; SELECT pg_current_xact_id()::text AS xid, pg_backend_pid() AS pid';
  // A Db on the direct URL for what needs a session (migrations): small, opened when first used.
  const direct = pooled
    ? createPgDb(directUrl, {
        directUrl,
        max: 2,
        timeoutMs,
        // Used at start (migrations): closed a second after, as the set-up pool is.
        idleMs: 1000,
        ...(options.applicationName ? { applicationName: `${options.applicationName}-direct` } : {}),
      })
    : undefined;
  // An idle client that loses its connection emits on the pool; without a listener Node would crash.
  pool.on('error', () => {});
  // Migrations and job-queue set-up (`exec`, multi-statement `executeSql`) may run longer than a statement's
  // deadline: they have a pool of their own, without the server's deadlines, opened when first used. Through a pooler
  // too: one simple-query message runs as one transaction, on one server connection (pg-boss's runtime scripts take
  // their advisory locks inside it), so PostgreSQL's connections stay the pooler's.
  let unbounded: pg.Pool | undefined;
  const longRunning = (): pg.Pool => {
    if (unbounded === undefined) {
      // Named apart (`…-setup`), so the pool's own bound stays what pg_stat_activity shows under the process's name.
      const name =
        config.application_name === undefined ? {} : { application_name: `${config.application_name}-setup` };
      unbounded = new pg.Pool({
        ...config,
        ...name,
        max: 2,
        idleTimeoutMillis: 1000,
        connectionTimeoutMillis: 2 * timeoutMs,
      });
      unbounded.on('error', () => {});
    }
    return unbounded;
  };
  // How long a COMMIT without an answer is asked about before it is called unknown: a connection, ending the backend
  // that holds the transaction, and asking its status take a deadline each; a database that answers settles it by
  // then (were the backend not ended, at the latest at the server's idle deadline).
  const settleMs = 4 * timeoutMs;
  const state = reachability();
  // Db.relaxed, made when first asked for.
  let relaxed: Db | undefined;

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
      // A pooler taken for PostgreSQL itself (no direct URL) refuses the server's deadlines as startup parameters.
      if (error instanceof pg.DatabaseError && /^unsupported startup parameter/.test(error.message)) {
        throw storeErrors.create('api:store:pooler-refused', { reason: error.message }, { cause: error });
      }
      if (error instanceof Unanswered) {
        throw storeErrors.create('api:store:outcome-unknown', { timeoutMs }, { cause: error.failure });
      }
      throw tlsRefusal(error, sslmode) ?? storeErrors.create('api:store:unavailable', { timeoutMs }, { cause: error });
    }
  }

  // With a name, pg parses the statement once per connection and then only binds and executes it. Its deadline is
  // `beforeDeadline`'s, not pg's own `query_timeout`, which rejects as its timer fires (see there).
  // Unnamed when the pool does not prepare (a pooler's server connection may not hold the name, or hold it already).
  const bound = (text: string, values: unknown[], name?: string) =>
    ({ text, values, name: prepared ? name : undefined }) as pg.QueryConfig;

  const listened = new WeakSet<pg.PoolClient>();
  // A client of the pool by `deadline` (the pool's own wait may add a connection attempt to a wait in its queue).
  async function acquire(deadline: number): Promise<pg.PoolClient> {
    const pending = pool.connect();
    try {
      const client = await beforeDeadline(pending, deadline, 'no connection of the pool in time');
      // A client out of the pool has no listener of the pool's: a connection the server ends meanwhile (its idle
      // deadline in a transaction whose process was stalled) would crash the process. Its next statement fails.
      if (!listened.has(client)) {
        listened.add(client);
        client.on('error', () => {});
      }
      return client;
    } catch (error) {
      pending.then(
        (client) => client.release(),
        () => {},
      );
      throw error;
    }
  }

  // One statement on a client of its own: a client within the deadline, then its answer within the deadline (the
  // server's own deadline is shorter). A statement past it leaves its connection closed (`failed`): it is not handed
  // out again. Sent and unanswered it may have committed on its own (autocommit): `Unanswered`.
  async function statement(text: string, values: unknown[], name?: string): Promise<pg.QueryResult> {
    const client = await acquire(performance.now() + timeoutMs);
    let failed: Error | undefined;
    try {
      return await beforeDeadline(
        client.query(bound(text, values, name)),
        performance.now() + timeoutMs,
        'no answer in time',
      );
    } catch (error) {
      // A connection that failed or did not answer is closed rather than handed out again.
      if (isConnectionFailure(error)) failed = error as Error;
      // PostgreSQL's own error in place of the answer (its deadline, a shutdown that ended the backend) says the
      // statement did not complete: certain. Anything else (no answer in time, a broken socket) is not.
      if (failed !== undefined && !(error instanceof pg.DatabaseError)) throw new Unanswered(error);
      throw error;
    } finally {
      client.release(failed);
    }
  }

  /**
   * What became of transaction `xid`, whose COMMIT was sent on backend `pid` and got no answer, asked on connections
   * of its own (each with its deadline) until `settleMs` have passed. The backend is ended first while it still holds
   * that transaction: a COMMIT it has not received then never arrives, and one it is committing is finished first
   * (PostgreSQL ends a backend only outside its commit). Then `pg_xact_status` says committed, aborted or in progress.
   */
  async function settle(xid: string, pid: number | null): Promise<CommitOutcome> {
    const until = performance.now() + settleMs;
    while (performance.now() < until) {
      const client = new pg.Client({ ...session, ...deadlines });
      client.on('error', () => {});
      const deadline = () => performance.now() + Math.min(timeoutMs, Math.max(1, until - performance.now()));
      try {
        await beforeDeadline(client.connect(), deadline(), 'no connection in time');
        while (performance.now() < until) {
          if (pid !== null) {
            await beforeDeadline(
              client.query(
                'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND backend_xid::text = $2',
                [pid, String(BigInt(xid) % 4294967296n)],
              ),
              deadline(),
              'no answer in time',
            );
          }
          const { rows } = await beforeDeadline(
            client.query<{ status: string | null }>('SELECT pg_xact_status($1::xid8) AS status', [xid]),
            deadline(),
            'no answer in time',
          );
          const status = rows[0]?.status;
          if (status === 'committed' || status === 'aborted') return status;
          // In progress: its backend is being ended, or is finishing its commit.
          await sleep(50);
        }
      } catch {
        // Asked again on a new connection until the time is up.
        await sleep(100);
      } finally {
        client.end().catch(() => {});
      }
    }
    return 'unknown';
  }

  function wrap(client: pg.PoolClient): Queryable {
    let lifted = false;
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
        // Migrations and job-queue set-up, without a deadline (another process may be migrating a large database
        // meanwhile): the server's statement deadline is lifted for the rest of this transaction, once.
        if (!lifted) {
          await client.query('SET LOCAL statement_timeout = 0');
          lifted = true;
        }
        // The simple-query protocol (no parameters) accepts several statements at once.
        await client.query(sql);
      },
    };
  }

  return {
    driver: 'pg',
    connectionString,
    ...(direct ? { direct } : {}),
    applicationName: options.applicationName,
    query<R>(text: string, params: unknown[] = [], options?: QueryOptions): Promise<QueryResult<R>> {
      return bounded(async () => {
        const result = await statement(text, params, options?.name);
        return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
      });
    },
    async exec(sql: string): Promise<void> {
      await longRunning().query(sql);
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
      const result = (await longRunning().query(text)) as pg.QueryResult | pg.QueryResult[];
      return { rows: Array.isArray(result) ? result.flatMap((r) => r.rows ?? []) : result.rows };
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const client = await bounded(() => acquire(performance.now() + timeoutMs));
      let broken: unknown;
      // The transaction's id and its backend's, taken in BEGIN's round trip, and whether its COMMIT was sent.
      let xid: string | undefined;
      let pid: number | null = null;
      let committing = false;
      let result: T | undefined;
      try {
        const tx = wrap(client);
        const begun = await bounded(() =>
          beforeDeadline(
            client.query(begin) as unknown as Promise<pg.QueryResult[]>,
            performance.now() + timeoutMs,
            'no answer in time',
          ),
        );
        const ids = begun[begun.length - 1]?.rows[0];
        xid = ids?.xid as string | undefined;
        pid = (ids?.pid as number | undefined) ?? null;
        result = await fn(tx);
        committing = true;
        await tx.query('COMMIT');
        return result;
      } catch (error) {
        // Without a working connection, PostgreSQL rolls the transaction back when the connection is closed (or at
        // its idle deadline): before COMMIT was sent, nothing of it is done, for certain.
        const lost = isMtError(error) && error.code === 'api:store:unavailable';
        if (lost) broken = error;
        else await client.query('ROLLBACK').catch(() => {});
        // A COMMIT sent without an answer: PostgreSQL is asked what became of it.
        if (lost && committing && xid !== undefined && !isServerDeadline(error.cause)) {
          const outcome = await settle(xid, pid);
          if (outcome === 'committed') return result as T;
          if (outcome === 'unknown') {
            throw storeErrors.create('api:store:outcome-unknown', { timeoutMs }, { cause: error.cause });
          }
        }
        throw error;
      } finally {
        client.release(broken as Error | undefined);
      }
    },
    get relaxed(): Db | undefined {
      if (pooled || options.synchronousCommit === false) return undefined;
      relaxed ??= createPgDb(connectionString, {
        directUrl: '',
        prepared,
        max: RELAXED_POOL_MAX,
        timeoutMs,
        synchronousCommit: false,
        ...(options.applicationName ? { applicationName: `${options.applicationName}-queue` } : {}),
      });
      return relaxed;
    },
    async close(): Promise<void> {
      await Promise.all([pool.end(), unbounded?.end(), direct?.close(), relaxed?.close()]);
    },
  };
}
