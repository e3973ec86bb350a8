import { randomUUID } from 'node:crypto';
import type { Db } from '../db/db.js';
import type { Wakeups } from '../wake/wakeups.js';
import { CACHE_IDLE_AFTER_LEASES, CACHE_LEASE_TICKS_PER_LEASE, DEFAULT_CACHE_LEASE_MS } from '../timers.js';
import type { StoreCache } from './store-cache.js';

/** Wake-up topic of the epoch's step (sent by the trigger of schema 7, since schema 17). */
export const CACHE_TOPIC = 'cache';
/** Wake-up topic a member notifies once it has acknowledged an epoch. */
export const CACHE_ACK_TOPIC = 'cache-ack';

/** How much later than the lease a settle gives up waiting (clock rates, a timer fired late). */
export const SETTLE_MARGIN_MS = 150;

/** Where the lease says that it goes live or reads through. */
export interface LeaseLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Options of {@link startCacheLease}. */
export interface CacheLeaseOptions {
  db: Db;
  /** The process's wake-ups: the lease's statements run on its LISTEN connection. */
  wakeups: Wakeups;
  /** The process's cache, live while the lease holds. */
  cache: StoreCache;
  /** The lease's length L (default {@link DEFAULT_CACHE_LEASE_MS}); renewed every L/4. */
  leaseMs?: number;
  /** False: settle only (a process whose cache is another's); default true. */
  member?: boolean;
  /** A fixed member id (tests): when a row already has it, joining fails loudly and the cache reads through. */
  memberId?: string;
  logger?: LeaseLogger;
}

/** What `GET /health` tells of the lease. */
export interface CacheLeaseState {
  /** `live`: no statement a request; `read-through`: the epoch read on each; `off`: not a member (PGlite). */
  mode: 'live' | 'read-through' | 'off';
  /** Why it reads through, when it does. */
  reason?: string;
}

/** A process's membership of the cache lease, and the settle of its writes. */
export interface CacheLease {
  state(): CacheLeaseState;
  /**
   * Waits until every live member has applied the epoch as it is now (call it after a write that stepped it has
   * committed, before answering), or until every lagging lease has ended: at most L + a margin. Never fails.
   */
  settle(): Promise<void>;
  /** Statements the lease sent on the LISTEN connection (join, renewals, acknowledgements). */
  readonly statements: number;
  /** The member's current id, when joined. */
  readonly memberId: string | undefined;
  /** Leaves (deletes its row, so writers stop waiting for it) and stops renewing. */
  close(): Promise<void>;
}

// Rows whose lease ended over a minute ago, and this process's row of its previous connection (it reads through since
// it lost that connection, so nobody needs to wait for that row's lease).
const CLEANUP = "DELETE FROM mt_cache_members WHERE lease_until < now() - interval '1 minute' OR id = $1::uuid";
// The row is inserted having applied no epoch (-1, below every epoch), and the epoch is read only by the renewal that
// follows, a later statement: a write either committed before that renewal's snapshot (and the member reads its epoch)
// or its settle began after the insert committed (and waits for the member's acknowledgement or its lease's end).
// Read in the insert's own statement, an epoch could predate a write whose settle missed the uncommitted row (#41).
const JOIN =
  'INSERT INTO mt_cache_members (id, acked, lease_until, lease_ms) ' +
  "VALUES ($1, -1, now() + $2 * interval '1 millisecond', $2) ON CONFLICT (id) DO NOTHING RETURNING id";
const RENEW =
  "UPDATE mt_cache_members SET lease_until = now() + $2 * interval '1 millisecond' WHERE id = $1 " +
  'RETURNING acked::text AS acked, (SELECT epoch FROM mt_cache_epoch)::text AS epoch';
const ACK =
  'WITH a AS (UPDATE mt_cache_members SET acked = $2 WHERE id = $1 AND acked < $2 RETURNING id) ' +
  `SELECT pg_notify('mt_wake', '${CACHE_ACK_TOPIC}') FROM a`;
const LEAVE = 'DELETE FROM mt_cache_members WHERE id = $1';
// An idle member ends its lease (it reads through from then on): no writer waits for it. The row stays for its return.
const REST = 'UPDATE mt_cache_members SET lease_until = least(lease_until, now()) WHERE id = $1';
/** Why an idle member reads through (`GET /health`'s `cache.reason`). */
export const IDLE_REASON = 'idle: no request read the cache lately; the next one reads the epoch and renews the lease';
// The epoch to wait for (the one given, else the current one) and how long until the earliest lease of a live member
// that has not acknowledged it ends (null: none), both on the database's clock.
const SETTLE =
  'WITH e AS (SELECT coalesce($1::bigint, epoch) AS epoch FROM mt_cache_epoch) ' +
  'SELECT e.epoch::text AS epoch, (SELECT ceil(extract(epoch FROM min(m.lease_until) - now()) * 1000)::float8 ' +
  'FROM mt_cache_members m WHERE m.lease_until > now() AND m.acked < e.epoch) AS wait_ms, ' +
  '(SELECT max(lease_ms) FROM mt_cache_members) AS max_lease_ms FROM e';

interface SettleRow {
  epoch: string;
  wait_ms: number | null;
  max_lease_ms: number | null;
}

interface MemberRow {
  acked: string;
  epoch: string;
}

/**
 * The settle of a process that is no member (PGlite, one process: nothing to wait for) or whose lease is off.
 * On PostgreSQL a writer must settle whether it is a member or not, so {@link startCacheLease} is used there.
 */
export const noCacheLease: CacheLease = {
  state: () => ({ mode: 'off' }),
  settle: async () => {},
  statements: 0,
  memberId: undefined,
  close: async () => {},
};

/**
 * Starts the process's membership of the bounded cache lease on PostgreSQL
 * (docs/decisions/0009-how-a-change-reaches-every-servers-cache.md): a row of `mt_cache_members` renewed every L/4 and at once on a `cache` wake-up,
 * every statement on the wake-ups' LISTEN connection with its deadline. The cache is live (no statement a request)
 * until T + 0.9 L, T the local time the last renewal was sent, once it has applied and acknowledged the epoch that
 * renewal read; otherwise it reads the epoch on each request as without a lease. On PGlite it returns
 * {@link noCacheLease}.
 */
export function startCacheLease(options: CacheLeaseOptions): CacheLease {
  const { db, wakeups, cache } = options;
  if (db.driver !== 'pg') return noCacheLease;
  const leaseMs = options.leaseMs ?? DEFAULT_CACHE_LEASE_MS;
  if (options.member === false || wakeups.query === undefined) {
    return { ...noCacheLease, settle: () => settleOn(db, wakeups, leaseMs) };
  }
  const query = wakeups.query.bind(wakeups);
  const log = options.logger;
  let memberId: string | undefined;
  let previousId: string | null = null;
  let statements = 0;
  let closed = false;
  let running = false;
  let again = false;
  let reason: string | undefined = 'not joined yet';
  let loggedLive = false;
  let failed = false;
  // When this process last (re)joined: a join counts as a use. Idle: the lease was ended for want of use.
  let joinedAt = performance.now();
  let idle = false;
  const inUse = () => performance.now() - Math.max(cache.usedAt, joinedAt) < CACHE_IDLE_AFTER_LEASES * leaseMs;

  function readThrough(why: string): void {
    cache.liveUntil(0);
    reason = why;
    noteMode();
  }

  // Logs once when the cache goes from live to read-through and back.
  function noteMode(): void {
    const live = cache.live;
    if (live && !loggedLive) {
      loggedLive = true;
      log?.info({ memberId }, 'cache lease: live, requests read no epoch');
    } else if (!live && loggedLive) {
      loggedLive = false;
      if (reason === IDLE_REASON) {
        log?.info({ memberId }, 'cache lease: idle, ended until the next request');
        return;
      }
      log?.warn(
        { memberId, reason: reason ?? 'the lease was not renewed in time' },
        'cache lease: read-through, every request reads the cache epoch until the lease is renewed',
      );
    }
  }

  // Inserts the member's row; true when joined. The caller's renewal then reads the epoch, in a statement of its own.
  async function join(): Promise<boolean> {
    const id = options.memberId ?? randomUUID();
    statements += 2;
    await query(CLEANUP, [previousId]);
    previousId = null;
    const rows = await query<{ id: string }>(JOIN, [id, leaseMs]);
    if (rows.length === 0) {
      // Only a fixed id can be taken already (a random one is not reused): two processes must not share a lease.
      if (!failed) {
        log?.error({ memberId: id }, 'cache lease: this member id is in use by another process; reading through');
      }
      failed = true;
      readThrough('member id in use');
      return false;
    }
    memberId = id;
    return true;
  }

  async function once(): Promise<void> {
    if (!wakeups.listening) return readThrough('the LISTEN connection is lost');
    if (!inUse()) return rest();
    idle = false;
    // Sent no later than now: the lease's row ends at the statement's now() + L, after this + 0.9 L.
    const sent = performance.now();
    let row: MemberRow | undefined;
    try {
      if (memberId === undefined && !(await join())) return;
      const joined = memberId;
      statements++;
      [row] = await query<MemberRow>(RENEW, [joined, leaseMs]);
      if (row === undefined) {
        // The row is gone (lapsed over a minute and cleaned up by a joining member): join again, fresh id.
        memberId = undefined;
        readThrough('the member row was removed');
        again = true;
        return;
      }
      const epoch = BigInt(row.epoch);
      // Forget what was kept before `epoch` first, then acknowledge it: a writer that sees the ack may answer.
      cache.observe(epoch);
      if (BigInt(row.acked) < epoch) {
        statements++;
        await query(ACK, [joined, row.epoch]);
      }
      // A reconnect meanwhile made this process a new member: only that member's own tick may make it live.
      if (closed || memberId !== joined) return;
      reason = undefined;
      cache.liveUntil(sent + 0.9 * leaseMs);
      noteMode();
    } catch (error) {
      readThrough(`the lease's statement failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  // No request read the cache for CACHE_IDLE_AFTER_LEASES L: read through, then end the row's lease (in that order:
  // the cache's deadline is over before the row's), once. Writers stop waiting for this member; the wake-up ping keeps
  // the connection checked. The next read makes it in use: the next tick renews.
  async function rest(): Promise<void> {
    if (idle) return;
    idle = true;
    readThrough(IDLE_REASON);
    if (memberId === undefined) return;
    statements++;
    await query(REST, [memberId]).catch(() => {});
  }

  // At most one tick in flight and one queued.
  async function tick(): Promise<void> {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        await once();
      } while (again && !closed);
    } finally {
      running = false;
    }
  }

  const offCache = wakeups.on(CACHE_TOPIC, () => void tick());
  // A new connection is a new member (a fresh id): the old row lapses and is cleaned up.
  const offConnect = wakeups.onConnect?.(() => {
    previousId = memberId ?? previousId;
    memberId = undefined;
    joinedAt = performance.now();
    void tick();
  });
  const offLost = wakeups.onLost?.(() => readThrough('the LISTEN connection is lost'));
  // Every L/4 while the cache is in use; once more when it has become idle (the rest), then nothing until it is used.
  const renew = setInterval(() => {
    noteMode();
    if (!idle || inUse()) void tick();
  }, leaseMs / CACHE_LEASE_TICKS_PER_LEASE);
  renew.unref();
  void tick();

  return {
    state() {
      if (cache.live) return { mode: 'live' };
      return { mode: 'read-through', reason: reason ?? 'the lease was not renewed in time' };
    },
    settle: () => settleOn(db, wakeups, leaseMs),
    get statements() {
      return statements;
    },
    get memberId() {
      return memberId;
    },
    async close() {
      closed = true;
      clearInterval(renew);
      offCache();
      offConnect?.();
      offLost?.();
      cache.liveUntil(0);
      const id = memberId;
      memberId = undefined;
      if (id !== undefined && wakeups.listening) await query(LEAVE, [id]).catch(() => {});
    },
  };
}

/** {@link CacheLease.settle} of any process on `db`, member or not. */
async function settleOn(db: Db, wakeups: Wakeups, leaseMs: number): Promise<void> {
  const start = performance.now();
  // Every member that has not read the write's epoch renewed last before the commit, so its local deadline ends
  // before commit + 0.9 L: past L + a margin after the commit (settle starts after it), it reads through and will
  // see the write. Answering then is safe, whatever the members or the database do meanwhile.
  // The members' lease lengths may differ from this process's: the longest counts (read with the first answer).
  let cap = start + leaseMs + SETTLE_MARGIN_MS;
  let woken = false;
  let wake: (() => void) | undefined;
  const offAck = wakeups.on(CACHE_ACK_TOPIC, () => {
    woken = true;
    wake?.();
  });
  try {
    let target: string | null = null;
    for (;;) {
      woken = false;
      let waitMs: number | undefined;
      try {
        const answer: { rows: SettleRow[] } = await db.query<SettleRow>(SETTLE, [target]);
        const row = answer.rows[0];
        if (target === null) cap = Math.max(cap, start + (row.max_lease_ms ?? 0) + SETTLE_MARGIN_MS);
        target ??= row.epoch;
        if (row.wait_ms === null) return;
        waitMs = Math.max(1, Number(row.wait_ms));
      } catch {
        // The database did not answer: wait for the cap, which needs no answer.
      }
      const left = cap - performance.now();
      if (left <= 0) return;
      if (woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(waitMs ?? left, left));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    offAck();
  }
}
