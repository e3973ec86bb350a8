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
            count(*) FILTER (WHERE kind = 'call' AND expires_at > clock_timestamp()) AS calls,
            count(*) FILTER (WHERE kind = 'in-flight' AND expires_at > clock_timestamp()) AS flights,
            ceil(extract(epoch FROM min(expires_at) FILTER (WHERE kind = 'in-flight' AND expires_at > clock_timestamp()) - clock_timestamp()) * 1000) AS flight_free_ms
       FROM mt_limit_slots WHERE namespace = $1 AND limit_key = $2`,
    [namespace, key],
  );
  const row = rows[0] as CountRow;
  const calls = Number(row.calls);
  if (spec.calls !== undefined && spec.perMs !== undefined && calls >= spec.calls) {
    // The (calls - N + 1)th oldest call row's end makes room for one more.
    const oldest = await tx.query<{ free_ms: string }>(
      `SELECT ceil(extract(epoch FROM expires_at - clock_timestamp()) * 1000) AS free_ms
         FROM mt_limit_slots
        WHERE namespace = $1 AND limit_key = $2 AND kind = 'call' AND expires_at > clock_timestamp()
        ORDER BY expires_at OFFSET $3 - 1 LIMIT 1`,
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

/**
 * Limits that hold across processes (docs/limits.md, decision 0320): every process admits a call under the same
 * transaction-scoped advisory locks of its (namespace, key)s, taken in one order, counting the `mt_limit_slots` rows
 * still alive. A call row lives for the window (a sliding window log: any window of `perMs` holds at most `calls`
 * admissions); an in-flight row until release or until its lease lapses. A call is admitted under all its limits or
 * none.
 */
export function createLimiter(db: Db) {
  return {
    async acquire(request: LimitRequest): Promise<LimitDecision> {
      const { namespace, leaseMs } = request;
      const limits = [...request.limits].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      const id = randomUUID();
      const outcome = await db.transaction(async (tx): Promise<Refusal | { granted: true; admittedAtMs: number }> => {
        for (const { key } of limits) {
          await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 7357032))', [`${namespace}/${key}`]);
        }
        let admittedAtMs = 0;
        let refused: Refusal | undefined;
        for (const spec of limits) {
          const answer = await refusal(tx, namespace, spec);
          if (!('granted' in answer)) admittedAtMs = Math.max(admittedAtMs, answer.nowMs);
          else if (refused === undefined || answer.retryAfterMs > refused.retryAfterMs) refused = answer;
        }
        if (refused !== undefined) return refused;
        for (const spec of limits) {
          if (spec.calls !== undefined && spec.perMs !== undefined) {
            await tx.query(
              `INSERT INTO mt_limit_slots (namespace, limit_key, kind, id, expires_at)
               VALUES ($1, $2, 'call', $3, clock_timestamp() + make_interval(secs => $4::double precision / 1000))`,
              [namespace, spec.key, id, spec.perMs],
            );
          }
          if (spec.inFlight !== undefined) {
            await tx.query(
              `INSERT INTO mt_limit_slots (namespace, limit_key, kind, id, expires_at)
               VALUES ($1, $2, 'in-flight', $3, clock_timestamp() + make_interval(secs => $4::double precision / 1000))`,
              [namespace, spec.key, id, leaseMs],
            );
          }
        }
        return { granted: true, admittedAtMs };
      });
      if (!outcome.granted) return outcome;
      const flights = limits.filter((l) => l.inFlight !== undefined).map((l) => l.key);
      return {
        granted: true,
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
    },
  };
}

/** The limiter {@link createLimiter} makes. */
export type Limiter = ReturnType<typeof createLimiter>;
