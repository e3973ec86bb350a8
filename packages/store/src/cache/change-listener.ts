import pg from 'pg';
import { CHANGE_CHANNEL, parseChange, type StoreChange } from './changes.js';

/** What a {@link listenForChanges} listener tells its owner. */
export interface ChangeHandlers {
  /** A change committed by any server on the database (this one included). */
  onChange(change: StoreChange): void;
  /** LISTEN is active (again): changes from here on are seen; anything cached before may be stale. */
  onListening(): void;
  /** The connection is gone: changes may be missed until `onListening` is called again. */
  onLost(error: unknown): void;
}

/** A running listener; `close` ends its connection and stops reconnecting. */
export interface ChangeListener {
  /**
   * Resolves once every change committed before the call has reached `onChange`: one round trip on the
   * LISTEN connection (PostgreSQL sends a session its pending notifications before answering it), shared by
   * the callers that wait at the same time. Resolves too when the connection is lost (`onLost` has run).
   */
  sync(): Promise<void>;
  /** Round trips made by `sync` so far. */
  readonly syncs: number;
  close(): Promise<void>;
}

/**
 * Opens a dedicated connection to the PostgreSQL server at `connectionString` that LISTENs on
 * {@link CHANGE_CHANNEL}, and reconnects every `retryMs` after it is lost. Resolves once LISTEN is active;
 * rejects when the first connection fails.
 */
export async function listenForChanges(
  connectionString: string,
  handlers: ChangeHandlers,
  options: { retryMs?: number } = {},
): Promise<ChangeListener> {
  const retryMs = options.retryMs ?? 1000;
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let syncs = 0;
  let current: Promise<void> | undefined;
  let queued: Promise<void> | undefined;

  function roundTrip(): Promise<void> {
    const target = client;
    if (target === undefined) return Promise.resolve();
    syncs++;
    const done: Promise<void> = target
      .query('SELECT 1')
      .then(
        () => {},
        () => {},
      )
      .finally(() => {
        if (current === done) current = undefined;
      });
    current = done;
    return done;
  }

  function sync(): Promise<void> {
    if (current === undefined) return roundTrip();
    // The round trip in flight may have been sent before a change this caller must see: wait for the next.
    queued ??= current.then(() => {
      queued = undefined;
      return current ?? roundTrip();
    });
    return queued;
  }

  async function connect(): Promise<void> {
    const next = new pg.Client({ connectionString });
    let lost = false;
    const onGone = (error: unknown) => {
      if (lost) return;
      lost = true;
      next.removeAllListeners('notification');
      if (client === next) client = undefined;
      void next.end().catch(() => {});
      if (closed) return;
      handlers.onLost(error);
      retry ??= setTimeout(reconnect, retryMs);
    };
    next.on('error', onGone);
    next.on('end', () => onGone(new Error('the LISTEN connection ended')));
    next.on('notification', (message) => {
      const change = message.payload === undefined ? undefined : parseChange(message.payload);
      if (change !== undefined) handlers.onChange(change);
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${CHANGE_CHANNEL}`);
    } catch (error) {
      onGone(error);
      throw error;
    }
    if (closed) {
      await next.end().catch(() => {});
      return;
    }
    client = next;
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
    if (retry !== undefined) clearTimeout(retry);
    throw error;
  }
  return {
    sync,
    get syncs() {
      return syncs;
    },
    async close(): Promise<void> {
      closed = true;
      if (retry !== undefined) clearTimeout(retry);
      const current = client;
      client = undefined;
      if (current !== undefined) {
        current.removeAllListeners();
        current.on('error', () => {});
        await current.end().catch(() => {});
      }
    },
  };
}
