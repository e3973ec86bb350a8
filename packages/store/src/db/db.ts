/** The rows and affected-row count of one statement. */
export interface QueryResult<R> {
  rows: R[];
  rowCount: number;
}

/** How {@link Queryable.query} runs a statement. */
export interface QueryOptions {
  /**
   * On PostgreSQL, a prepared statement of this name, parsed and planned once per connection instead of on every
   * call: for a fixed statement on a hot path (the cache's epoch read of every request). The same name must always
   * carry the same text. PGlite ignores it.
   */
  name?: string;
}

/** What can run SQL: a database or a transaction on it. */
export interface Queryable {
  /** Runs one parameterised statement (`$1`, `$2`, ...). */
  query<R = Record<string, unknown>>(text: string, params?: unknown[], options?: QueryOptions): Promise<QueryResult<R>>;
  /** Runs parameterless SQL that may hold several statements (migrations, job-queue setup). */
  exec(sql: string): Promise<void>;
}

/** The most connections of {@link Db.relaxed}'s pool. */
export const RELAXED_POOL_MAX = 2;

/** The one database interface of Maitento, implemented on `pg` (a Pool) and on PGlite. */
export interface Db extends Queryable {
  /** Which driver is underneath. */
  readonly driver: 'pg' | 'pglite';
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** The connection string of a `pg` database (undefined for PGlite), for clients that open their own pool. */
  readonly connectionString?: string;
  /**
   * PostgreSQL only, when the pool goes through a pooler (`MT_DIRECT_DATABASE_URL` set): a Db on PostgreSQL without
   * it, for what needs a session of its own (migrations; the wake-up LISTEN connection uses its `connectionString`).
   */
  readonly direct?: Db;
  /**
   * PostgreSQL only, without a pooler: a small pool on the same database (at most {@link RELAXED_POOL_MAX} connections,
   * opened when first used, named `<process>-queue`) whose commits do not wait for the write-ahead log's flush
   * (`synchronous_commit = off`), for writes that a crash of PostgreSQL may lose because they are redone anyway: the
   * job queue's fetch, settle, heartbeat and supervision (a job whose settle or heartbeat is lost is retried once its
   * heartbeat lapses; the run's claim fences the attempt). The database stays consistent: a later commit that waits
   * for the flush makes every earlier one durable. Undefined on PGlite and through a pooler (use the Db itself).
   */
  readonly relaxed?: Db;
  /** PostgreSQL's `application_name` of this process's connections (`mt-serve`, `mt-worker`), if set. */
  readonly applicationName?: string;
  /**
   * Runs SQL the way a job queue (pg-boss's `db.executeSql`) expects: with `values`, one parameterised
   * statement; without, possibly several statements, whose rows are all returned, in order.
   */
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
  /**
   * PGlite only (one process): calls `fn` with the payload of each notification on `channel`, delivered after
   * the sending transaction commits; resolves with the function that stops it. A `pg` Db has none: its
   * listeners open a connection of their own.
   */
  listen?(channel: string, fn: (payload: string) => void): Promise<() => Promise<void>>;
  /**
   * False from a statement that failed with `api:store:unavailable` (one begun after the last answer) until the next
   * one answered (always true on PGlite).
   */
  readonly reachable: boolean;
  /**
   * On PGlite only (one process, so every write goes through this object): statements that may have written, counted
   * once they finished, so a reader can tell that nothing was written since it last looked. Undefined on PostgreSQL.
   */
  writes?(): number;
  /**
   * PostgreSQL only: the pool's connections now (open, idle, and requests waiting for one) and its most, for
   * `/metrics`. Undefined on PGlite.
   */
  poolStats?(): { total: number; idle: number; waiting: number; max: number };
  /** Calls `listener` each time {@link Db.reachable} changes (never on PGlite). */
  onReachability(listener: (reachable: boolean, error?: unknown) => void): void;
  /** Closes the pool or the embedded database. */
  close(): Promise<void>;
}
