import { createHash } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Dispatcher } from 'undici';
import type { ResolvedOptions } from '../gateway/options.js';
import { abortable } from '../internal/deadline.js';
import type { ResolvedAuth } from '../steps/auth.js';
import { guardedFetch } from './fetch.js';
import { loadSdk } from './sdk.js';

const CLIENT_INFO = { name: 'maitento-gateway', version: '0.1.0' };
const USER_AGENT = 'Maitento/0.1';

/** How long a session that a cancelled or timed-out call used stays open, so the cancellation can reach the server. */
const RETIRE_GRACE_MS = 1_000;

/** What opening sessions needs from the gateway. */
export interface SessionContext {
  options: ResolvedOptions;
  dispatcher: Dispatcher;
}

/** One open MCP session: an SDK client on a Streamable HTTP transport whose every request carries the credential. */
export interface McpSession {
  readonly client: Client;
  readonly transport: StreamableHTTPClientTransport;
  /** Rejects when the session broke under a call (an answer over the size limit); never resolves. */
  readonly broken: Promise<never>;
  /** Calls in flight on it. */
  inFlight: number;
  /** Calls it answered: a session that answered one is known to have worked. */
  uses: number;
  /** Taken out of the pool: closed once its calls are over. */
  retired: boolean;
  idle: NodeJS.Timeout | undefined;
  closing: Promise<void> | undefined;
}

/** Bytes one HTTP answer of a session may carry: the JSON-RPC message must be read whole before it is cut. */
function mcpMessageLimit(options: ResolvedOptions): number {
  return Math.max(10 * options.maxResponseBytes, 10 * 1024 * 1024);
}

/** Opens a session (the SDK's `initialize` and `notifications/initialized`) within the gateway's timeout. */
export async function openSession(
  ctx: SessionContext,
  url: URL,
  auth: ResolvedAuth | undefined,
  tool: string,
): Promise<McpSession> {
  const sdk = await loadSdk();
  let fail: (error: Error) => void = () => {};
  const broken = new Promise<never>((_, reject) => {
    fail = reject;
  });
  broken.catch(() => {});
  const headers: Record<string, string> = { 'user-agent': USER_AGENT };
  if (auth !== undefined) headers[auth.header] = auth.value;
  const transport = new sdk.StreamableHTTPClientTransport(url, {
    fetch: guardedFetch({
      url,
      dispatcher: ctx.dispatcher,
      maxBytes: mcpMessageLimit(ctx.options),
      tool,
      onTooLarge: (error) => fail(error),
    }),
    requestInit: { headers },
  });
  const client = new sdk.Client(CLIENT_INFO, { capabilities: {} });
  // The transport's errors reach the request they belong to; nothing else is to be told of them.
  client.onerror = () => {};
  await client.connect(transport, { timeout: ctx.options.timeoutMs });
  return { client, transport, broken, inFlight: 0, uses: 0, retired: false, idle: undefined, closing: undefined };
}

/** Ends a session: a DELETE to the server (bounded, errors ignored), then the transport's requests are aborted. */
export function closeSession(session: McpSession): Promise<void> {
  if (session.closing !== undefined) return session.closing;
  clearTimeout(session.idle);
  session.idle = undefined;
  session.closing = (async () => {
    try {
      await session.transport.terminateSession();
    } catch {
      // The server may not support DELETE, or be gone: the session is dropped on this side all the same.
    }
    try {
      await session.client.close();
    } catch {
      // Closing aborts what is in flight; nothing to report.
    }
  })();
  return session.closing;
}

/** The pool key: the URL and who the session speaks for (a hash of the credential, never the value itself). */
function sessionKey(url: URL, auth: ResolvedAuth | undefined): string {
  if (auth === undefined) return `${url.href}\n`;
  const identity = createHash('sha256').update(auth.header).update('\0').update(auth.value).digest('hex');
  return `${url.href}\n${identity}`;
}

/**
 * Open sessions, one per (URL, credential), reused by the calls that follow and closed after `idleMs` without a
 * call in flight (timers `unref`'d: they never keep a process alive).
 */
export class SessionPool {
  readonly #ctx: SessionContext;
  readonly #entries = new Map<string, Promise<McpSession>>();
  /** The key and the pool entry of each session that came out of the pool. */
  readonly #placeOf = new WeakMap<McpSession, { key: string; entry: Promise<McpSession> }>();
  readonly #live = new Set<McpSession>();
  readonly #opening = new Set<Promise<McpSession>>();

  constructor(ctx: SessionContext) {
    this.#ctx = ctx;
  }

  /** A session for the call, marked in use; raced with the call's deadline (the opening itself is not cut short). */
  async lease(url: URL, auth: ResolvedAuth | undefined, tool: string, deadline: AbortSignal): Promise<McpSession> {
    const key = sessionKey(url, auth);
    for (;;) {
      let entry = this.#entries.get(key);
      if (entry === undefined) {
        const opening = openSession(this.#ctx, url, auth, tool);
        entry = opening;
        this.#entries.set(key, opening);
        this.#opening.add(opening);
        opening.then(
          (session) => {
            this.#opening.delete(opening);
            this.#placeOf.set(session, { key, entry: opening });
            this.#live.add(session);
          },
          () => {
            this.#opening.delete(opening);
            if (this.#entries.get(key) === opening) this.#entries.delete(key);
          },
        );
      }
      const session = await abortable(entry, deadline);
      // Closed (idle or broken) while this call waited: the entry is gone, so the next turn opens a new one.
      if (session.closing !== undefined || session.retired) {
        if (this.#entries.get(key) === entry) this.#entries.delete(key);
        continue;
      }
      clearTimeout(session.idle);
      session.idle = undefined;
      session.inFlight++;
      return session;
    }
  }

  /** The call is over and the session worked: it waits for the next call, or closes when idle. */
  release(session: McpSession): void {
    session.inFlight--;
    session.uses++;
    this.#settle(session);
  }

  /**
   * The call was cancelled or timed out: the session leaves the pool and closes shortly after its last call, so the
   * SDK's `notifications/cancelled` reaches the server first (the server answers a cancelled request never, and its
   * open answer would hold a connection).
   */
  retire(session: McpSession): void {
    session.inFlight--;
    this.#unpool(session);
    this.#settle(session);
  }

  /** The session failed: it leaves the pool and is closed now. */
  drop(session: McpSession): void {
    session.inFlight--;
    this.#unpool(session);
    this.#close(session);
  }

  /** Closes every session (the gateway is closing), waiting for those still opening. */
  async closeAll(): Promise<void> {
    const opening = [...this.#opening];
    this.#entries.clear();
    await Promise.all(opening.map((p) => p.then(undefined, () => undefined)));
    await Promise.all([...this.#live].map((session) => this.#close(session)));
  }

  #unpool(session: McpSession): void {
    session.retired = true;
    const place = this.#placeOf.get(session);
    if (place !== undefined && this.#entries.get(place.key) === place.entry) this.#entries.delete(place.key);
  }

  #settle(session: McpSession): void {
    if (session.inFlight > 0 || session.closing !== undefined) return;
    clearTimeout(session.idle);
    const wait = session.retired ? RETIRE_GRACE_MS : this.#ctx.options.mcpSessionIdleMs;
    session.idle = setTimeout(() => {
      session.idle = undefined;
      if (session.inFlight === 0) {
        this.#unpool(session);
        void this.#close(session);
      }
    }, wait);
    session.idle.unref();
  }

  #close(session: McpSession): Promise<void> {
    this.#live.delete(session);
    return closeSession(session);
  }
}
