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
/**
 * The slowest the webhook delivery loop waits when wake-ups listen and it knows of nothing due sooner (a retry's time
 * and a stopped process's lease are read in its one statement).
 */
export const WEBHOOK_MAX_WAIT_MS = 60_000;
/** The MCP sessions' tick: closes idle sessions; reads the tool lists only while wake-ups are not listening. */
export const MCP_SESSIONS_TICK_MS = 5000;
/** A run event stream's keep-alive comment after this much silence. */
export const STREAM_KEEPALIVE_MS = 15_000;
/**
 * How often an open run event stream renews its run's watch mark (`watchRun`, which lasts `RUN_WATCH_SECONDS`), in
 * its own loop: it reads at least this often while its mark would otherwise lapse.
 */
export const RUN_WATCH_RENEW_MS = 20_000;
/** How often a knowledge-base document's reading thread's memory is read against its budget, while it reads. */
export const EXTRACT_MEMORY_CHECK_MS = 20;

/** How often the scheduler of schedules looks again while a tick is queued: it starts within this long of the run's end. */
export const SCHEDULER_POLL_MS = 5000;
/**
 * A tick taken more than this long after its time counts as missed (no process was up at its time): the schedule's
 * missed-tick policy decides, not its overlap.
 */
export const SCHEDULE_GRACE_MS = 5000;
/**
 * How long a run's tool call over a limit with onLimit "wait" waits in its worker for the window to open (a sleep of
 * the gateway's, retried at the limiter's time): a later window makes the run wait durably (PendingLimit, docs/limits.md).
 */
export const LIMIT_WAIT_IN_WORKER_MS = 1000;
/**
 * The slowest the chaining loop of triggers waits for a delivery owed (a run's end that a trigger's `on` names): it
 * is woken by `triggers` at once, and this sweep takes what a process killed mid-start left pending.
 */
export const TRIGGER_CHAIN_SWEEP_MS = 30_000;
/**
 * How often a call whose connection another process is refreshing (its row locked) tries the row again, holding no
 * pooled connection in between (store/connections refreshConnection), until {@link REFRESH_WAIT_MS}.
 */
export const REFRESH_POLL_MS = 100;
/**
 * The deadline of that wait: longer than the holder's token request (10 s, the gateway's OAUTH_REQUEST_TIMEOUT_MS);
 * past it the call is not sent (`api:connections:refresh-busy`).
 */
export const REFRESH_WAIT_MS = 15_000;
