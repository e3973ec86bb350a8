/**
 * The periods of every loop of `mt serve` and `mt worker`, in one place: docs/architecture.md ("Timers") lists each
 * with what wakes it and its fallback, and a test keeps that table and these values equal. The fallback rule is one
 * for all waiters: a waiter reads when its wake-up comes and at a deadline it knows (an expiry, a keep-alive), and
 * every {@link FALLBACK_POLL_MS} only while wake-ups are not listening. The pg-boss queue's own periods live in the
 * engine's worker/queue.ts.
 */

/** The fallback poll of every waiter, only while the wake-up connection is not listening. */
export const FALLBACK_POLL_MS = 2000;

/** The wake-up connection's ping (skipped while the cache lease's renewals answer, which stand in for it). */
export const WAKE_PING_MS = 2000;
/** The wait between attempts to reconnect a lost wake-up connection. */
export const WAKE_RETRY_MS = 1000;

/** The cache lease's length L when `MT_CACHE_LEASE_MS` is unset: 1 s. */
export const DEFAULT_CACHE_LEASE_MS = 1000;
/** The lease's renewal timer ticks every L/4; a member whose cache is in use renews at every tick. */
export const CACHE_LEASE_TICKS_PER_LEASE = 4;
/**
 * A member whose cache no request or tool call read for this many leases L (nor since it joined) is idle: it ends its
 * lease and reads through, renewing nothing until its cache is read again (the wake-up ping checks the connection).
 */
export const CACHE_IDLE_AFTER_LEASES = 4;

/** The slowest a worker's sweep of due approvals and idle conversations waits when it knows of nothing due sooner. */
export const SWEEP_MAX_MS = 30_000;
/** The MCP sessions' tick: closes idle sessions; reads the tool lists only while wake-ups are not listening. */
export const MCP_SESSIONS_TICK_MS = 5000;
/** A run event stream's keep-alive comment after this much silence. */
export const STREAM_KEEPALIVE_MS = 15_000;
/** How often a knowledge-base document's reading thread's memory is read against its budget, while it reads. */
export const EXTRACT_MEMORY_CHECK_MS = 20;
