import { AsyncResource } from 'node:async_hooks';
import pg from 'pg';
import type { Db } from '../db/db.js';
import { pgConnectionConfig, tlsRefusal } from '../db/pg-config.js';
import { WAKE_PING_MS, WAKE_RETRY_MS } from '../timers.js';
import { WAKE_CHANNEL } from './notify.js';

/** One process's wake-ups: notifications on the PostgreSQL channel `mt_wake`, delivered by topic. */
export interface Wakeups {
  /** Calls `fn` each time `topic` is notified by any process on the database (this one included); returns the unsubscribe. */
  on(topic: string, fn: () => void): () => void;
  /** True while other processes' notifications arrive; while false, waiters rely on their slow fallback poll. */
  readonly listening: boolean;
  /** Stops listening; subscribers are not called any more. */
  close(): Promise<void>;
  /**
   * Runs one statement on the LISTEN connection (PostgreSQL only) within the connection's deadline; past it the
   * connection is dropped and reconnected as when a ping fails. Rejects at once while not listening.
   */
  query?<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<R[]>;
  /** Calls `fn` each time the LISTEN connection is (re)established (PostgreSQL only); returns the unsubscribe. */
  onConnect?(fn: () => void): () => void;
  /** Calls `fn` each time the LISTEN connection is lost (PostgreSQL only); returns the unsubscribe. */
  onLost?(fn: () => void): () => void;
}

/** Where {@link openWakeups} says that it lost its connection and that it is back. */
export interface WakeLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Options of {@link openWakeups}. */
export interface WakeupsOptions {
  /** PostgreSQL to LISTEN on; default the pg database's own connection string. Ignored on PGlite. */
  url?: string;
  /** Deadline of the connect and of every query on the LISTEN connection (default 2000 ms). */
  deadlineMs?: number;
  /** How often a round trip checks that the connection still answers (default 2000 ms). */
  pingMs?: number;
  /** Wait between attempts to reconnect a lost connection (default 1000 ms). */
  retryMs?: number;
  /** Told once when the connection is lost and once when it is back. */
  logger?: WakeLogger;
}

/** The subscribers of each topic, and their delivery. */
function topicTable() {
  const topics = new Map<string, Set<() => void>>();
  const call = (fns: Set<() => void> | undefined) => {
    for (const fn of [...(fns ?? [])]) {
      try {
        fn();
      } catch {
        // A subscriber's failure is its own; the others are still woken.
      }
    }
  };
  return {
    on(topic: string, fn: () => void): () => void {
      // Each subscription is its own entry, so the same function subscribed twice is unsubscribed once each. It is
      // called in the subscriber's async context, not the notifier's: on PGlite a notification is delivered inside
      // the writer's call, and a subscriber (a scheduler re-arming its timer) would otherwise carry the writer's
      // request context (its Idempotency-Key) into the work it starts.
      const entry = AsyncResource.bind(() => fn());
      const fns = topics.get(topic) ?? new Set();
      topics.set(topic, fns);
      fns.add(entry);
      return () => {
        fns.delete(entry);
        if (fns.size === 0 && topics.get(topic) === fns) topics.delete(topic);
      };
    },
    deliver: (topic: string) => call(topics.get(topic)),
    /** Wakes every subscriber: after a gap in listening, any of them may have missed its notification. */
    all: () => {
      for (const fns of [...topics.values()]) call(fns);
    },
  };
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    // Rejects after the event loop's next poll for I/O: when the loop was blocked past the deadline (a process
    // starting, a long synchronous task), an answer already received is read first and wins.
    timer = setTimeout(
      () => setImmediate(() => reject(new Error(`no answer from the wake-up connection within ${ms} ms`))),
      ms,
    );
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Ends a client at once, whatever its socket's state: a stalled one would never answer `end()`. */
function drop(client: pg.Client): void {
  client.removeAllListeners('notification');
  client.on('error', () => {});
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
  void client.end().catch(() => {});
}

async function openPgliteWakeups(db: Db): Promise<Wakeups> {
  const table = topicTable();
  let closed = false;
  const unlisten = await db.listen!(WAKE_CHANNEL, (topic) => {
    if (!closed) table.deliver(topic);
  });
  return {
    on: table.on,
    get listening() {
      return !closed;
    },
    async close() {
      closed = true;
      await unlisten().catch(() => {});
    },
  };
}

/**
 * Opens the process's wake-ups on `db` (a LISTEN connection with a deadline on every query on PostgreSQL; in-process
 * on PGlite). On PostgreSQL one dedicated connection LISTENs on `mt_wake`; a round trip every `pingMs` must answer
 * within `deadlineMs`, else the connection is dropped and reconnected every `retryMs` (`listening` is false
 * meanwhile, and every subscriber is woken once it is back, since it may have missed a notification). Resolves
 * after the first attempt, listening or not.
 */
export async function openWakeups(db: Db, options: WakeupsOptions = {}): Promise<Wakeups> {
  if (db.driver === 'pglite' && db.listen !== undefined) return openPgliteWakeups(db);
  // Never through a pooler: a LISTEN needs its session (docs/operations.md, "Poolers").
  const url = options.url ?? db.direct?.connectionString ?? db.connectionString;
  if (url === undefined) throw new Error('openWakeups: a PostgreSQL database needs a connection string');
  // TLS as the store's pool has it (pg-config.ts); named `<process>-wake` in pg_stat_activity.
  const { config: connection, sslmode } = pgConnectionConfig(
    url,
    db.applicationName ? `${db.applicationName}-wake` : undefined,
  );
  const deadlineMs = options.deadlineMs ?? 2000;
  const pingMs = options.pingMs ?? WAKE_PING_MS;
  const retryMs = options.retryMs ?? WAKE_RETRY_MS;
  const table = topicTable();
  let client: pg.Client | undefined;
  let lost: ((error: unknown) => void) | undefined;
  let listening = false;
  let wasLost = false;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let pinging = false;
  // One statement at a time on the connection (the ping and the cache lease's), each with its deadline once sent.
  let chain: Promise<unknown> = Promise.resolve();
  // When the connection last answered a statement: the cache lease's renewals stand in for the ping.
  let answered = 0;
  function serial(target: pg.Client, text: string, values: unknown[]): Promise<pg.QueryResult> {
    const run = chain.then(
      () => withDeadline(target.query(text, values), deadlineMs),
      () => withDeadline(target.query(text, values), deadlineMs),
    );
    chain = run.catch(() => {});
    return run.then((result) => {
      answered = performance.now();
      return result;
    });
  }
  const connected = new Set<() => void>();
  const lostFns = new Set<() => void>();
  const callEach = (fns: Set<() => void>) => {
    for (const fn of [...fns]) {
      try {
        fn();
      } catch {
        // A subscriber's failure is its own.
      }
    }
  };

  function setLost(error: unknown): void {
    if (closed) return;
    callEach(lostFns);
    if (listening || !wasLost) {
      options.logger?.warn(
        { err: error },
        'wake-ups: the LISTEN connection is lost; waiters fall back to their slow poll until it is back',
      );
    }
    listening = false;
    wasLost = true;
    retry ??= setTimeout(reconnect, retryMs);
  }

  async function connect(): Promise<void> {
    const next = new pg.Client({ ...connection, connectionTimeoutMillis: deadlineMs });
    let gone = false;
    const onGone = (error: unknown) => {
      if (gone) return;
      gone = true;
      drop(next);
      if (client === next) {
        client = undefined;
        lost = undefined;
      }
      setLost(error);
    };
    next.on('error', onGone);
    next.on('end', () => onGone(new Error('the wake-up connection ended')));
    next.on('notification', (message) => {
      if (message.channel === WAKE_CHANNEL && message.payload) table.deliver(message.payload);
    });
    try {
      await withDeadline(next.connect(), deadlineMs);
      await withDeadline(next.query(`LISTEN ${WAKE_CHANNEL}`), deadlineMs);
    } catch (error) {
      onGone(tlsRefusal(error, sslmode) ?? error);
      return;
    }
    if (closed) return drop(next);
    client = next;
    lost = onGone;
    listening = true;
    if (wasLost) {
      options.logger?.info({}, 'wake-ups: the LISTEN connection is back');
      table.all();
    }
    callEach(connected);
  }

  function reconnect(): void {
    retry = undefined;
    if (!closed) void connect();
  }

  const ping = setInterval(() => {
    const target = client;
    const onGone = lost;
    if (target === undefined || onGone === undefined || pinging) return;
    if (performance.now() - answered < pingMs) return;
    pinging = true;
    serial(target, 'SELECT 1', [])
      .catch(onGone)
      .finally(() => {
        pinging = false;
      });
  }, pingMs);
  ping.unref();

  await connect();
  return {
    on: table.on,
    get listening() {
      return listening;
    },
    async query<R>(text: string, values: unknown[] = []): Promise<R[]> {
      const target = client;
      const onGone = lost;
      if (target === undefined || onGone === undefined || !listening) {
        throw new Error('the wake-up connection is not listening');
      }
      try {
        const result = await serial(target, text, values);
        return result.rows as R[];
      } catch (error) {
        // A statement past its deadline means a stalled connection (as a failed ping); an SQL error does not.
        if (!(error instanceof Error && 'severity' in error)) onGone(error);
        throw error;
      }
    },
    onConnect(fn) {
      const entry = () => fn();
      connected.add(entry);
      return () => connected.delete(entry);
    },
    onLost(fn) {
      const entry = () => fn();
      lostFns.add(entry);
      return () => lostFns.delete(entry);
    },
    async close() {
      closed = true;
      listening = false;
      clearInterval(ping);
      if (retry !== undefined) clearTimeout(retry);
      const current = client;
      client = undefined;
      if (current !== undefined) drop(current);
    },
  };
}
