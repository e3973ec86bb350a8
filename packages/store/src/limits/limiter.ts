import { randomUUID } from 'node:crypto';
import type { Db, Queryable } from '../db/db.js';

/** One limit: `calls` per `perMs` (a sliding window) and/or `inFlight` at once, on what `key` names. */
export interface LimitSpec {
  /** What the limit counts, such as `tool:<name>` or `origin:<origin>`. */
  key: string;
  calls?: number;
  perMs?: number;
  inFlight?: number;
}

/** A call to admit under every one of `limits` at once, in `namespace`. */
export interface LimitRequest {
  namespace: string;
  limits: LimitSpec[];
  /** How long an in-flight slot is held at most: a process killed mid-call frees it once this lapses. */
  leaseMs: number;
}

/** A call admitted (release its in-flight slots when it ends) or refused, with the limit and when to try again. */
export type LimitDecision =
  | { granted: true; admittedAtMs: number; release(): Promise<void> }
  | { granted: false; retryAfterMs: number; reason: 'calls' | 'in-flight'; key: string };

interface CountRow {
  now_ms: string;
  calls: string;
  flights: string;
  flight_free_ms: string | null;
}

type Refusal = Extract<LimitDecision, { granted: false }>;

// Whether `spec` admits one more call now: the database's time and the calls alive when it does; the refusal with when
// to try again otherwise.
async function refusal(
  tx: Queryable,
  namespace: string,
  spec: LimitSpec,
): Promise<Refusal | { nowMs: number; calls: number }> {
  const { key } = spec;
  const { rows } = await tx.query<CountRow>(
    `WITH gone AS (
       DELETE FROM mt_limit_slots WHERE namespace = $1 AND limit_key = $2 AND expires_at <= clock_timestamp()
     )
     SELECT floor(extract(epoch FROM clock_timestamp()) * 1000) AS now_ms,
            coalesce(sum(permits) FILTER (WHERE kind = 'call' AND expires_at > clock_timestamp()), 0) AS calls,
            count(*) FILTER (WHERE kind = 'in-flight' AND expires_at > clock_timestamp()) AS flights,
            ceil(extract(epoch FROM min(expires_at) FILTER (WHERE kind = 'in-flight' AND expires_at > clock_timestamp()) - clock_timestamp()) * 1000) AS flight_free_ms
       FROM mt_limit_slots WHERE namespace = $1 AND limit_key = $2`,
    [namespace, key],
  );
  const row = rows[0] as CountRow;
  const calls = Number(row.calls);
  if (spec.calls !== undefined && spec.perMs !== undefined && calls >= spec.calls) {
    // The row whose end makes room: the first, oldest first, by which calls - N + 1 permits have left the window (a
    // row stands for `permits` calls: one, or a lease's).
    const oldest = await tx.query<{ free_ms: string }>(
      `SELECT ceil(extract(epoch FROM expires_at - clock_timestamp()) * 1000) AS free_ms FROM (
         SELECT expires_at, sum(permits) OVER (ORDER BY expires_at, id ROWS UNBOUNDED PRECEDING) AS gone
           FROM mt_limit_slots
          WHERE namespace = $1 AND limit_key = $2 AND kind = 'call' AND expires_at > clock_timestamp()
       ) alive WHERE gone >= $3 ORDER BY expires_at LIMIT 1`,
      [namespace, key, calls - spec.calls + 1],
    );
    const free = Number(oldest.rows[0]?.free_ms ?? 1);
    return { granted: false, retryAfterMs: Math.max(1, free), reason: 'calls', key };
  }
  if (spec.inFlight !== undefined && Number(row.flights) >= spec.inFlight) {
    // A slot frees when a call ends (not known here) or at the latest when its lease lapses: try again soon.
    const lapse = Number(row.flight_free_ms ?? 1);
    return { granted: false, retryAfterMs: Math.max(1, Math.min(lapse, 250)), reason: 'in-flight', key };
  }
  return { nowMs: Number(row.now_ms), calls };
}

/** The local allowance of a limiter (decision 0375): how many permits it leases, and when it leases. */
export interface AllowanceOptions {
  /** The most permits one lease takes (default 4096; 0: no allowance, every call asks the database). */
  maxPermits?: number;
  /**
   * The permits a first lease takes (default 16): a lease spent before its end doubles the next (or more: as many as last
   * a lease's time at the rate it was spent), one more than half unused halves it.
   */
  minPermits?: number;
  /** A lease takes at most 1/`share` of what the window has left (default 8): processes far from the limit share it. */
  share?: number;
  /** No lease while the window has fewer than this many calls left (default 16): near the limit every call asks. */
  farFrom?: number;
  /** How long leased permits may be spent (default the window / 10, at most 1 s); then the unused ones go back. */
  leaseMs?: (perMs: number) => number;
}

const DEFAULT_ALLOWANCE = {
  maxPermits: 4096,
  minPermits: 16,
  share: 8,
  farFrom: 16,
  leaseMs: (perMs: number) => Math.min(1000, Math.floor(perMs / 10)),
} satisfies Required<AllowanceOptions>;

/** Permits leased from one count: spent here without a round trip until `until` (this process's monotonic clock). */
interface Allowance {
  calls: number;
  perMs: number;
  /** The lease's row, its permits not spent yet, and how many were leased. */
  id: string;
  left: number;
  leased: number;
  until: number;
  /** The database's time at the lease, and this process's monotonic time when the lease was asked for. */
  dbNowMs: number;
  askedAt: number;
  returned: boolean;
}

/** What a process holds of one count: its leases (the earliest ending first), the next lease's size, one lease asked. */
interface Held {
  namespace: string;
  key: string;
  allowances: Allowance[];
  size: number;
  leasing: Promise<void> | undefined;
}

/** How the database is asked: a call without leasing, a call leasing permits, or a lease alone (asked ahead). */
type Mode = 'exact' | 'lease' | 'lease-only';

/**
 * Limits that hold across processes (docs/limits.md, decision 0320): every process admits a call under the same
 * transaction-scoped advisory locks of its (namespace, key)s, taken in one order, counting the `mt_limit_slots` rows
 * still alive. A call row lives for the window (a sliding window log: any window of `perMs` holds at most `calls`
 * admissions); an in-flight row until release or until its lease lapses. A call is admitted under all its limits or
 * none.
 *
 * A local allowance (decision 0375): far from a limit of calls per window (no `inFlight`), a process leases permits
 * in the same transaction, one row standing for all of them (`permits`), alive for the window plus the lease's time;
 * its next calls spend them without a round trip until the lease ends (this process's clock, from before the lease
 * was asked for), and the next lease is asked ahead when half its permits or a quarter of its time is left, as big as
 * lasts a lease's time at the rate they are spent. Then the unused permits are given back (the
 * row's `permits` lowered). A permit spent at any time of its lease has its row alive a whole window after, so the
 * bound stays exact across processes.
 */
export function createLimiter(db: Db, options: AllowanceOptions = {}) {
  const opts = { ...DEFAULT_ALLOWANCE, ...options };
  // What this process holds, by namespace and key (no key string built on a call).
  const held = new Map<string, Map<string, Held>>();
  const heldOf = (namespace: string, key: string): Held => {
    let inNamespace = held.get(namespace);
    if (inNamespace === undefined) {
      inNamespace = new Map();
      held.set(namespace, inNamespace);
    }
    let one = inNamespace.get(key);
    if (one === undefined) {
      one = { namespace, key, allowances: [], size: opts.minPermits, leasing: undefined };
      inNamespace.set(key, one);
    }
    return one;
  };
  const forget = (one: Held) => {
    if (one.allowances.length > 0 || one.leasing !== undefined) return;
    const inNamespace = held.get(one.namespace);
    if (inNamespace?.get(one.key) !== one) return;
    inNamespace.delete(one.key);
    if (inNamespace.size === 0) held.delete(one.namespace);
  };

  // The allowance of `spec`'s count held in `namespace` with a permit left now, if any (nothing is made).
  function permitOf(namespace: string, spec: LimitSpec, now: number): Allowance | undefined {
    const one = held.get(namespace)?.get(spec.key);
    if (one === undefined) return undefined;
    for (const allowance of one.allowances) {
      if (
        allowance.left > 0 &&
        now < allowance.until &&
        allowance.calls === spec.calls &&
        allowance.perMs === spec.perMs
      )
        return allowance;
    }
    return undefined;
  }

  // Gives `unused` permits of a lease back to the count: its row stands for that many calls fewer. When the update
  // fails they count until the row's window ends, never fewer calls than were made.
  function giveBackPermits(one: Held, id: string, unused: number): void {
    if (unused === 0) return;
    db.query(
      `UPDATE mt_limit_slots SET permits = greatest(0, permits - $4)
        WHERE namespace = $1 AND limit_key = $2 AND kind = 'call' AND id = $3`,
      [one.namespace, one.key, id, unused],
    ).catch(() => {});
  }

  // A lease's end: its unused permits go back; when more than half were unused, the next lease is half as big.
  function giveBack(one: Held, allowance: Allowance): void {
    allowance.returned = true;
    one.allowances = one.allowances.filter((a) => a !== allowance);
    const unused = allowance.left;
    allowance.left = 0;
    if (unused * 2 > allowance.leased) one.size = Math.max(opts.minPermits, Math.floor(one.size / 2));
    giveBackPermits(one, allowance.id, unused);
    forget(one);
  }

  // A permit of `spec`'s count held here, taken; undefined when none is left.
  function take(one: Held, spec: LimitSpec, now: number): [Held, Allowance] | undefined {
    const allowance = permitOf(one.namespace, spec, now);
    if (allowance === undefined) return undefined;
    spendOne(one, allowance);
    return [one, allowance];
  }

  function spendOne(one: Held, allowance: Allowance): void {
    allowance.left -= 1;
    // Spent before its end: the next lease is twice as big.
    if (allowance.left === 0) one.size = Math.min(opts.maxPermits, one.size * 2);
  }

  // Permits taken for a call that another of its limits then refused: not spent.
  function putBack(taken: [Held, Allowance][]): void {
    for (const [one, allowance] of taken) {
      if (allowance.returned || performance.now() >= allowance.until) giveBackPermits(one, allowance.id, 1);
      else allowance.left += 1;
    }
  }

  // How many permits to lease when `alive` calls are in the window: none near the limit.
  function permitsFor(spec: LimitSpec, alive: number, own: number): number {
    if (spec.calls === undefined || spec.perMs === undefined || spec.inFlight !== undefined) return 0;
    const left = spec.calls - alive - own;
    if (left < opts.farFrom) return 0;
    return Math.floor(left / opts.share);
  }

  // The count in the database: admits the call under every one of `limits` or none (`lease-only`: admits no call);
  // leasing, leases permits of each limit too.
  async function counted(namespace: string, limits: LimitSpec[], leaseMs: number, mode: Mode) {
    const id = randomUUID();
    const askedAt = performance.now();
    const own = mode === 'lease-only' ? 0 : 1;
    type Leased = { spec: LimitSpec; permits: number; nowMs: number };
    const outcome = await db.transaction(
      async (tx): Promise<Refusal | { granted: true; admittedAtMs: number; leased: Leased[] }> => {
        for (const { key } of limits) {
          await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 7357032))', [`${namespace}/${key}`]);
        }
        let admittedAtMs = 0;
        let refused: Refusal | undefined;
        const alive: number[] = [];
        for (const spec of limits) {
          const answer = await refusal(tx, namespace, spec);
          if (!('granted' in answer)) {
            admittedAtMs = Math.max(admittedAtMs, answer.nowMs);
            alive.push(answer.calls);
          } else if (refused === undefined || answer.retryAfterMs > refused.retryAfterMs) refused = answer;
        }
        if (refused !== undefined) return refused;
        const leased: Leased[] = [];
        for (const [i, spec] of limits.entries()) {
          if (spec.calls !== undefined && spec.perMs !== undefined) {
            const size = mode === 'exact' ? 0 : heldOf(namespace, spec.key).size;
            const permits = Math.min(size, permitsFor(spec, alive[i] as number, own));
            // This call's row (one permit) is alive for the window; the lease's row (`id:lease`, its permits) for the
            // window and the lease's time, so a permit spent at the lease's end still counts a whole window.
            if (own + permits > 0) {
              await tx.query(
                `INSERT INTO mt_limit_slots (namespace, limit_key, kind, id, expires_at, permits)
                 SELECT $1::text, $2::text, 'call', CASE WHEN n = 0 THEN $3::text ELSE $3::text || ':lease' END,
                        clock_timestamp() + make_interval(
                          secs => (CASE WHEN n = 0 THEN $4::double precision ELSE $4::double precision + $6::double precision END) / 1000),
                        CASE WHEN n = 0 THEN 1 ELSE $5::int END
                   FROM (VALUES (0), (1)) AS rows (n)
                  WHERE (n = 0 AND $7::int = 1) OR (n = 1 AND $5::int > 0)`,
                [namespace, spec.key, id, spec.perMs, permits, opts.leaseMs(spec.perMs), own],
              );
            }
            if (permits > 0) leased.push({ spec, permits, nowMs: admittedAtMs });
          }
          if (spec.inFlight !== undefined && own === 1) {
            await tx.query(
              `INSERT INTO mt_limit_slots (namespace, limit_key, kind, id, expires_at)
               VALUES ($1, $2, 'in-flight', $3, clock_timestamp() + make_interval(secs => $4::double precision / 1000))`,
              [namespace, spec.key, id, leaseMs],
            );
          }
        }
        return { granted: true, admittedAtMs, leased };
      },
    );
    if (!outcome.granted) return outcome;
    for (const { spec, permits, nowMs } of outcome.leased) {
      const perMs = spec.perMs as number;
      const one = heldOf(namespace, spec.key);
      const allowance: Allowance = {
        calls: spec.calls as number,
        perMs,
        id: `${id}:lease`,
        left: permits,
        leased: permits,
        // From before the lease was asked for: the database's insert came later, so its rows outlive every spend.
        until: askedAt + opts.leaseMs(perMs),
        dbNowMs: nowMs,
        askedAt,
        returned: false,
      };
      one.allowances.push(allowance);
      setTimeout(() => giveBack(one, allowance), Math.max(0, allowance.until - performance.now())).unref();
    }
    const flights = limits.filter((l) => l.inFlight !== undefined).map((l) => l.key);
    return {
      granted: true as const,
      admittedAtMs: outcome.admittedAtMs,
      async release() {
        if (flights.length === 0) return;
        await db.query(
          `DELETE FROM mt_limit_slots
            WHERE namespace = $1 AND limit_key = ANY($2::text[]) AND kind = 'in-flight' AND id = $3`,
          [namespace, flights, id],
        );
      },
    };
  }

  // Asks `asking` as the one lease of `ones` under way: other calls wait for it rather than lease again.
  function underWay(ones: Held[], asking: Promise<unknown>): void {
    const done: Promise<void> = asking.then(
      () => {},
      () => {},
    );
    for (const one of ones) one.leasing = done;
    void done.then(() => {
      for (const one of ones) {
        if (one.leasing === done) one.leasing = undefined;
        forget(one);
      }
    });
  }

  // The next lease of `spec`'s count asked ahead, none being under way, when half of a lease's permits are left or a
  // quarter of its time: the calls that follow find it ready, rather than waiting for it once the last is spent or ends.
  // It is as big as lasts a lease's time at the rate the live leases are being spent, if that is more than the size.
  function ahead(namespace: string, spec: LimitSpec, one: Held, now: number): void {
    if (one.leasing !== undefined) return;
    const leaseMs = opts.leaseMs(spec.perMs as number);
    let left = 0;
    let spent = 0;
    let since = now;
    let until = now;
    for (const a of one.allowances) {
      if (now >= a.until) continue;
      left += a.left;
      spent += a.leased - a.left;
      if (a.askedAt < since) since = a.askedAt;
      if (a.left > 0 && a.until > until) until = a.until;
    }
    if (left * 2 > one.size && (until - now) * 4 > leaseMs) return;
    const lasting = Math.ceil((spent * leaseMs) / Math.max(1, now - since));
    if (lasting > one.size) one.size = Math.min(opts.maxPermits, lasting);
    underWay([one], counted(namespace, [spec], 0, 'lease-only'));
  }

  const nothing = async () => {};

  // A call admitted under every one of `limits` from the permits this process holds, without a round trip (decision
  // 0375), the next leases asked ahead where due; false, nothing taken, when one of them has no permit here.
  function spend(namespace: string, limits: readonly LimitSpec[]): boolean {
    if (opts.maxPermits === 0) return false;
    const now = performance.now();
    for (const spec of limits) if (permitOf(namespace, spec, now) === undefined) return false;
    for (const spec of limits) {
      const one = heldOf(namespace, spec.key);
      spendOne(one, permitOf(namespace, spec, now) as Allowance);
      ahead(namespace, spec, one, now);
    }
    return true;
  }

  return {
    spend,

    async acquire(request: LimitRequest): Promise<LimitDecision> {
      const { namespace } = request;
      const limits =
        request.limits.length === 1
          ? request.limits
          : [...request.limits].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      const local =
        opts.maxPermits > 0 &&
        limits.every(
          (l) =>
            l.inFlight === undefined && l.calls !== undefined && l.perMs !== undefined && opts.leaseMs(l.perMs) > 0,
        );
      if (!local) return counted(namespace, limits, request.leaseMs, 'exact');
      for (let attempt = 0; ; attempt++) {
        const now = performance.now();
        const taken: [Held, Allowance][] = [];
        const needed: LimitSpec[] = [];
        for (const spec of limits) {
          const permit = take(heldOf(namespace, spec.key), spec, now);
          if (permit === undefined) needed.push(spec);
          else taken.push(permit);
        }
        let localAdmittedAtMs = 0;
        for (const [, a] of taken)
          localAdmittedAtMs = Math.max(localAdmittedAtMs, Math.floor(a.dbNowMs + (now - a.askedAt)));
        if (needed.length === 0) {
          for (const [i, spec] of limits.entries()) ahead(namespace, spec, (taken[i] as [Held, Allowance])[0], now);
          return { granted: true, admittedAtMs: localAdmittedAtMs, release: nothing };
        }
        // A lease of a needed count is under way: wait for it (twice at most) rather than lease again.
        const pending = needed.map((spec) => heldOf(namespace, spec.key).leasing).filter((p) => p !== undefined);
        if (pending.length > 0 && attempt < 2) {
          putBack(taken);
          await Promise.all(pending);
          continue;
        }
        const asking = counted(namespace, needed, request.leaseMs, 'lease');
        underWay(
          needed.map((spec) => heldOf(namespace, spec.key)),
          asking,
        );
        let decision: LimitDecision;
        try {
          decision = await asking;
        } catch (error) {
          putBack(taken);
          throw error;
        }
        if (!decision.granted) {
          putBack(taken);
          return decision;
        }
        return { ...decision, admittedAtMs: Math.max(decision.admittedAtMs, localAdmittedAtMs) };
      }
    },
  };
}

/** The limiter {@link createLimiter} makes. */
export type Limiter = ReturnType<typeof createLimiter>;
