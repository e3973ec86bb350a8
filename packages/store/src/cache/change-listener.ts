import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { CHANGE_CHANNEL, parseChange, type StoreChange } from './changes.js';

/**
 * The channel of the settle protocol: a writer's barrier (`{"barrier":id,"from":member}`) and the other members'
 * acknowledgements of it (`{"ack":id,"member":member}`).
 */
export const SETTLE_CHANNEL = 'mt_cache_settle';

/** What a LISTEN connection of a cache calls itself (`application_name`), followed by its member id. */
export const MEMBER_PREFIX = 'mt-cache:';

/** How long a successful round trip on the LISTEN connection lets a cache trust itself, by default. */
export const DEFAULT_LEASE_MS = 1000;

/** What a {@link listenForChanges} listener tells its owner. */
export interface ChangeHandlers {
  /** A change committed by any server on the database (this one included). */
  onChange(change: StoreChange): void;
  /** LISTEN is active (again): changes from here on are seen; anything cached before may be stale. */
  onListening(): void;
  /** The connection is gone: changes may be missed until `onListening` is called again. */
  onLost(error: unknown): void;
}

/** Options of {@link listenForChanges}. */
export interface ListenOptions {
  /** Wait between attempts to reconnect a lost connection (default 1000 ms). */
  retryMs?: number;
  /** The lease a round trip grants (default {@link DEFAULT_LEASE_MS}); renewed every quarter of it. */
  leaseMs?: number;
}

/** A running listener; `close` ends its connection and stops reconnecting. */
export interface ChangeListener {
  /**
   * Resolves once every change committed before the call has reached `onChange`, as far as this process can
   * know it. At once while the lease holds (a writer does not answer before every member has applied its change,
   * {@link settle}); otherwise one round trip on the LISTEN connection (PostgreSQL sends a session its pending
   * notifications before answering it), shared by the callers that wait at the same time. Resolves too when the
   * connection is lost (`onLost` has run).
   */
  sync(): Promise<void>;
  /**
   * Call after committing a change: resolves once every member listening on this database (this one included)
   * has applied it (acknowledged a barrier sent after it), or once the leases of those that have not must have
   * run out.
   */
  settle(): Promise<void>;
  /** True while the last round trip's lease holds. */
  readonly leased: boolean;
  /** Round trips made by `sync` (and by lease renewals) so far. */
  readonly syncs: number;
  close(): Promise<void>;
}

interface Barrier {
  waiting: Set<string>;
  done: () => void;
}

/**
 * Opens a dedicated connection to the PostgreSQL server at `connectionString` that LISTENs on
 * {@link CHANGE_CHANNEL} and takes part in the settle protocol as one member: every member acknowledges every
 * other member's barrier, after the changes committed before it (notifications arrive in commit order). Its
 * lease (the time of the last round trip answered, plus `leaseMs`) is renewed every quarter of `leaseMs`; a
 * writer waits for a silent member no longer than that member's lease can last. Reconnects every `retryMs` after
 * the connection is lost. Resolves once LISTEN is active; rejects when the first connection fails.
 */
export async function listenForChanges(
  connectionString: string,
  handlers: ChangeHandlers,
  options: ListenOptions = {},
): Promise<ChangeListener> {
  const retryMs = options.retryMs ?? 1000;
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const member = randomUUID();
  const barriers = new Map<string, Barrier>();
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let syncs = 0;
  let leaseUntil = 0;
  let current: Promise<void> | undefined;
  let queued: Promise<void> | undefined;

  function roundTrip(): Promise<void> {
    const target = client;
    if (target === undefined) return Promise.resolve();
    syncs++;
    const sent = performance.now();
    const done: Promise<void> = target
      .query('SELECT 1')
      .then(
        () => {
          // Every notification committed before `sent` has reached onChange (it came before this answer).
          if (client === target) leaseUntil = Math.max(leaseUntil, sent + leaseMs);
        },
        () => {},
      )
      .finally(() => {
        if (current === done) current = undefined;
      });
    current = done;
    return done;
  }

  function sync(): Promise<void> {
    if (client !== undefined && performance.now() < leaseUntil) return Promise.resolve();
    if (current === undefined) return roundTrip();
    // The round trip in flight may have been sent before a change this caller must see: wait for the next.
    queued ??= current.then(() => {
      queued = undefined;
      return current ?? roundTrip();
    });
    return queued;
  }

  const renewal = setInterval(() => {
    if (current === undefined) void roundTrip();
  }, leaseMs / 4);
  renewal.unref();

  function onSettleMessage(target: pg.Client, payload: string): void {
    let message: { barrier?: unknown; from?: unknown; ack?: unknown; member?: unknown };
    try {
      message = JSON.parse(payload);
    } catch {
      return;
    }
    if (typeof message.barrier === 'string') {
      // Everything committed before the barrier has reached onChange: say so (to oneself without a message).
      if (message.from === member) acknowledged(message.barrier, member);
      else {
        target
          .query('SELECT pg_notify($1, $2)', [SETTLE_CHANNEL, JSON.stringify({ ack: message.barrier, member })])
          .catch(() => {});
      }
    } else if (typeof message.ack === 'string' && typeof message.member === 'string') {
      acknowledged(message.ack, message.member);
    }
  }

  function acknowledged(id: string, by: string): void {
    const barrier = barriers.get(id);
    if (barrier === undefined) return;
    barrier.waiting.delete(by);
    if (barrier.waiting.size === 0) barrier.done();
  }

  async function settle(): Promise<void> {
    // A member that has not acknowledged by then has had no round trip answered since the change was committed
    // (it would have applied the change first), so its lease has run out: it reads through to the database.
    const deadline = performance.now() + leaseMs * 1.1 + 10;
    const target = client;
    const id = randomUUID();
    let timer: NodeJS.Timeout | undefined;
    const settled = new Promise<void>((resolve) => {
      barriers.set(id, { waiting: new Set(), done: resolve });
      timer = setTimeout(resolve, Math.max(0, deadline - performance.now()));
    });
    try {
      if (target === undefined) throw new Error('not listening');
      // The members listed here had LISTEN active before the barrier is sent, so each of them receives it; this
      // one too, which then has also applied its own change's notification.
      const { rows } = await target.query<{ name: string }>(
        'SELECT application_name AS name FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE $1',
        [`${MEMBER_PREFIX}%`],
      );
      const barrier = barriers.get(id)!;
      barrier.waiting.add(member);
      for (const row of rows) barrier.waiting.add(row.name.slice(MEMBER_PREFIX.length));
      await target.query('SELECT pg_notify($1, $2)', [SETTLE_CHANNEL, JSON.stringify({ barrier: id, from: member })]);
      await settled;
    } catch {
      // Without the connection, the acknowledgements cannot be counted: the leases are waited out instead.
      await settled;
    } finally {
      clearTimeout(timer);
      barriers.delete(id);
    }
  }

  async function connect(): Promise<void> {
    const next = new pg.Client({ connectionString });
    let lost = false;
    const onGone = (error: unknown) => {
      if (lost) return;
      lost = true;
      next.removeAllListeners('notification');
      if (client === next) {
        client = undefined;
        leaseUntil = 0;
      }
      void next.end().catch(() => {});
      if (closed) return;
      handlers.onLost(error);
      retry ??= setTimeout(reconnect, retryMs);
    };
    next.on('error', onGone);
    next.on('end', () => onGone(new Error('the LISTEN connection ended')));
    next.on('notification', (message) => {
      if (message.payload === undefined) return;
      if (message.channel === SETTLE_CHANNEL) return onSettleMessage(next, message.payload);
      const change = parseChange(message.payload);
      if (change !== undefined) handlers.onChange(change);
    });
    try {
      await next.connect();
      const sent = performance.now();
      await next.query(`LISTEN ${CHANGE_CHANNEL}; LISTEN ${SETTLE_CHANNEL}`);
      // Named only once it listens: a writer that finds it in pg_stat_activity can count on its acknowledgement.
      await next.query('SELECT set_config($1, $2, false)', ['application_name', `${MEMBER_PREFIX}${member}`]);
      if (closed) {
        await next.end().catch(() => {});
        return;
      }
      client = next;
      leaseUntil = sent + leaseMs;
    } catch (error) {
      onGone(error);
      throw error;
    }
    handlers.onListening();
  }

  function reconnect(): void {
    retry = undefined;
    if (closed) return;
    // A failed attempt has already scheduled the next one (onGone).
    connect().catch(() => {});
  }

  try {
    await connect();
  } catch (error) {
    closed = true;
    clearInterval(renewal);
    if (retry !== undefined) clearTimeout(retry);
    throw error;
  }
  return {
    sync,
    settle,
    get leased() {
      return client !== undefined && performance.now() < leaseUntil;
    },
    get syncs() {
      return syncs;
    },
    async close(): Promise<void> {
      closed = true;
      clearInterval(renewal);
      if (retry !== undefined) clearTimeout(retry);
      const current = client;
      client = undefined;
      leaseUntil = 0;
      for (const barrier of barriers.values()) barrier.done();
      if (current !== undefined) {
        current.removeAllListeners();
        current.on('error', () => {});
        await current.end().catch(() => {});
      }
    },
  };
}
