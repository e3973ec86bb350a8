import type { Queryable } from '../db/db.js';
import { storeErrors } from '../errors.js';

/**
 * A namespace's quotas (docs/quotas.md; decision 0345): null is no quota. Set by the operator.
 */
export interface NamespaceQuotas {
  /** Runs started in a UTC day (every run created, child runs of agents as tools included). */
  runsPerDay: number | null;
  /** Tool calls of the runs created in a UTC day (each with a stored result; a call refused by this quota is not one). */
  toolCallsPerDay: number | null;
  /** Model tokens (input + output) of the runs created in a UTC month. */
  tokensPerMonth: number | null;
}

/** A namespace's quotas, the figures they are held to, and when each period ends. */
export interface QuotaStanding {
  quotas: NamespaceQuotas;
  /** The figures of GET /v1/usage over the current periods. */
  used: { runsToday: number; toolCallsToday: number; tokensThisMonth: number };
  /** When the UTC day and month end (ISO 8601), and the whole seconds until then (at least 1). */
  dayEndsAt: string;
  monthEndsAt: string;
  secondsToDayEnd: number;
  secondsToMonthEnd: number;
}

/** The code of a tool call this quota refused: such a result is no tool call made (usage does not count it). */
export const TOOL_CALL_QUOTA_CODE = 'api:quota:tool-calls-exceeded';

const NO_QUOTAS: NamespaceQuotas = { runsPerDay: null, toolCallsPerDay: null, tokensPerMonth: null };

interface QuotaRow {
  runs_per_day: number | null;
  tool_calls_per_day: number | null;
  tokens_per_month: string | null;
}

function quotasOf(row: QuotaRow | undefined): NamespaceQuotas {
  if (row === undefined) return { ...NO_QUOTAS };
  return {
    runsPerDay: row.runs_per_day,
    toolCallsPerDay: row.tool_calls_per_day,
    tokensPerMonth: row.tokens_per_month === null ? null : Number(row.tokens_per_month),
  };
}

function quotaOf(quotas: NamespaceQuotas, check: QuotaCheck): number | null {
  if (check === 'runs') return quotas.runsPerDay;
  return check === 'tool-calls' ? quotas.toolCallsPerDay : quotas.tokensPerMonth;
}

function none(quotas: NamespaceQuotas): boolean {
  return quotas.runsPerDay === null && quotas.toolCallsPerDay === null && quotas.tokensPerMonth === null;
}

/** The quotas of `namespace` (all null when none is set). */
export async function getNamespaceQuotas(db: Queryable, namespace: string): Promise<NamespaceQuotas> {
  const { rows } = await db.query<QuotaRow>(
    'SELECT runs_per_day, tool_calls_per_day, tokens_per_month FROM mt_namespace_quotas WHERE namespace = $1',
    [namespace],
  );
  return quotasOf(rows[0]);
}

/**
 * Sets the quotas of `namespace` (a null is no quota; all null removes the row). Throws api:namespaces:not-found
 * for a namespace that does not exist. Resolves with the quotas as they were before.
 */
export async function setNamespaceQuotas(
  db: Queryable,
  namespace: string,
  quotas: NamespaceQuotas,
): Promise<NamespaceQuotas> {
  const { rows: exists } = await db.query('SELECT 1 FROM mt_namespaces WHERE name = $1', [namespace]);
  if (exists.length === 0) throw storeErrors.create('api:namespaces:not-found', { name: namespace });
  const before = await getNamespaceQuotas(db, namespace);
  if (none(quotas)) {
    await db.query('DELETE FROM mt_namespace_quotas WHERE namespace = $1', [namespace]);
  } else {
    await db.query(
      'INSERT INTO mt_namespace_quotas (namespace, runs_per_day, tool_calls_per_day, tokens_per_month) ' +
        'VALUES ($1, $2, $3, $4) ON CONFLICT (namespace) DO UPDATE SET runs_per_day = EXCLUDED.runs_per_day, ' +
        'tool_calls_per_day = EXCLUDED.tool_calls_per_day, tokens_per_month = EXCLUDED.tokens_per_month, updated_at = now()',
      [namespace, quotas.runsPerDay, quotas.toolCallsPerDay, quotas.tokensPerMonth],
    );
  }
  return before;
}

interface FiguresRow {
  runs_today: string;
  tool_calls_today: string;
  tokens_month: string;
  day_end: Date;
  month_end: Date;
  day_left: string;
  month_left: string;
}

// The periods are the UTC day and month of the database's clock; the figures are GET /v1/usage's over them (the runs
// created in the period: their count, their tool results but those this quota refused, their tokens). A figure not
// asked for ($3, $4, $5 false) is not counted: a subquery in a CASE branch not taken is not run.
const FIGURES =
  "WITH p AS (SELECT date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS day, " +
  "date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS month) " +
  'SELECT CASE WHEN $3 THEN (SELECT count(*) FROM mt_runs r WHERE r.namespace = $1 AND r.created_at >= ' +
  'p.day) ELSE 0 END AS runs_today, ' +
  'CASE WHEN $4 THEN (SELECT count(*) FROM mt_runs r JOIN mt_run_events e ON e.run_id = r.id WHERE r.namespace = $1 ' +
  "AND r.created_at >= p.day AND e.type = 'tool-result' AND (e.data->>'code') IS DISTINCT FROM $2) " +
  'ELSE 0 END AS tool_calls_today, ' +
  'CASE WHEN $5 THEN (SELECT coalesce(sum(r.input_tokens + r.output_tokens), 0) FROM mt_runs r WHERE ' +
  'r.namespace = $1 AND r.created_at >= p.month) ELSE 0 END AS tokens_month, ' +
  "p.day + interval '1 day' AS day_end, p.month + interval '1 month' AS month_end, " +
  "extract(epoch FROM p.day + interval '1 day' - clock_timestamp()) AS day_left, " +
  "extract(epoch FROM p.month + interval '1 month' - clock_timestamp()) AS month_left FROM p";

type QuotaCheck = 'runs' | 'tool-calls' | 'tokens';
const ALL: readonly QuotaCheck[] = ['runs', 'tool-calls', 'tokens'];

async function figures(
  db: Queryable,
  namespace: string,
  quotas: NamespaceQuotas,
  counted: readonly QuotaCheck[] = ALL,
): Promise<QuotaStanding> {
  const { rows } = await db.query<FiguresRow>(FIGURES, [
    namespace,
    TOOL_CALL_QUOTA_CODE,
    counted.includes('runs'),
    counted.includes('tool-calls'),
    counted.includes('tokens'),
  ]);
  const row = rows[0]!;
  return {
    quotas,
    used: {
      runsToday: Number(row.runs_today),
      toolCallsToday: Number(row.tool_calls_today),
      tokensThisMonth: Number(row.tokens_month),
    },
    dayEndsAt: new Date(row.day_end).toISOString(),
    monthEndsAt: new Date(row.month_end).toISOString(),
    secondsToDayEnd: Math.max(1, Math.ceil(Number(row.day_left))),
    secondsToMonthEnd: Math.max(1, Math.ceil(Number(row.month_left))),
  };
}

/** The quotas of `namespace` and the figures they are held to now. */
export async function quotaStanding(db: Queryable, namespace: string): Promise<QuotaStanding> {
  return figures(db, namespace, await getNamespaceQuotas(db, namespace));
}

function refusal(namespace: string, standing: QuotaStanding, checks: readonly QuotaCheck[]) {
  const { quotas, used } = standing;
  const base = { namespace };
  if (checks.includes('runs') && quotas.runsPerDay !== null && used.runsToday >= quotas.runsPerDay) {
    const seconds = standing.secondsToDayEnd;
    return storeErrors.create(
      'api:quota:runs-exceeded',
      { ...base, quota: quotas.runsPerDay, used: used.runsToday, seconds },
      { details: { retryAfterSeconds: seconds } },
    );
  }
  if (checks.includes('tokens') && quotas.tokensPerMonth !== null && used.tokensThisMonth >= quotas.tokensPerMonth) {
    const seconds = standing.secondsToMonthEnd;
    return storeErrors.create(
      'api:quota:tokens-exceeded',
      { ...base, quota: quotas.tokensPerMonth, used: used.tokensThisMonth, seconds },
      { details: { retryAfterSeconds: seconds } },
    );
  }
  if (
    checks.includes('tool-calls') &&
    quotas.toolCallsPerDay !== null &&
    used.toolCallsToday >= quotas.toolCallsPerDay
  ) {
    const seconds = standing.secondsToDayEnd;
    return storeErrors.create(
      'api:quota:tool-calls-exceeded',
      { ...base, quota: quotas.toolCallsPerDay, used: used.toolCallsToday, seconds },
      { details: { retryAfterSeconds: seconds } },
    );
  }
  return undefined;
}

/**
 * Inside the transaction that stores a new run: refuses it (throws api:quota:runs-exceeded, or
 * api:quota:tokens-exceeded / api:quota:tool-calls-exceeded when the namespace has spent those, its runs would get no
 * model turn or no call) when a quota of `namespace` is reached. A namespace with no quota costs one primary-key read.
 * Under a transaction-scoped advisory lock of the namespace's quotas, so that starts on every process are counted one
 * after the other: the runs-a-day quota admits exactly its number.
 */
export async function admitRunUnderQuotas(tx: Queryable, namespace: string): Promise<void> {
  const quotas = await getNamespaceQuotas(tx, namespace);
  if (none(quotas)) return;
  await tx.query("SELECT pg_advisory_xact_lock(hashtext('mt-quota'), hashtext($1))", [namespace]);
  const counted = ALL.filter((check) => quotaOf(quotas, check) !== null);
  const error = refusal(namespace, await figures(tx, namespace, quotas, counted), counted);
  if (error !== undefined) throw error;
}

/**
 * The refusal of a tool call of a run in `namespace` by its tool-calls-a-day quota, or undefined to make it.
 * `quotas` are the namespace's as the run's execution read them (no query when it has no such quota).
 */
export async function toolCallQuotaRefusal(db: Queryable, namespace: string, quotas: NamespaceQuotas) {
  if (quotas.toolCallsPerDay === null) return undefined;
  return refusal(namespace, await figures(db, namespace, quotas, ['tool-calls']), ['tool-calls']);
}

/** The refusal of a model turn of a run in `namespace` by its tokens-a-month quota, or undefined to ask the model. */
export async function tokenQuotaRefusal(db: Queryable, namespace: string, quotas: NamespaceQuotas) {
  if (quotas.tokensPerMonth === null) return undefined;
  return refusal(namespace, await figures(db, namespace, quotas, ['tokens']), ['tokens']);
}
