import type { Queryable } from '../db/db.js';
import { storeErrors } from '../errors.js';
import { TOOL_CALL_QUOTA_CODE } from './quotas.js';

/**
 * How usage figures are grouped: the namespace as a whole, or by interaction, by the key that started the run, or by
 * tool (the name the call was made by).
 */
export type UsageGrouping = 'namespace' | 'interaction' | 'key' | 'tool';

/** What the runs of one group spent over a period. */
export interface UsageGroup {
  /** The namespace, interaction name, key id or tool name; null for runs no key started (schedules, triggers). */
  key: string | null;
  /** Runs (by tool: the runs that called it). */
  runs: number;
  /** Tool calls made (each with a stored result, a handed-on task to an agent included; not a call a quota refused). */
  toolCalls: number;
  /** Tokens and cost are the model's: 0 in a group by tool. */
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

interface UsageRow {
  grp: string | null;
  runs: string;
  tool_calls: string;
  input_tokens: string;
  output_tokens: string;
  cost_usd: string;
}

function time(value: string | undefined, name: string): Date | null {
  if (value === undefined) return null;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw storeErrors.create('api:audit:time-invalid', { name, value });
  return date;
}

/**
 * The usage of the runs of `namespace` created in [since, until) (docs/runs.md "Usage and budgets"): how many runs,
 * tool calls (their stored results), tokens and cost, in one group or by interaction, key or tool. The tokens and
 * cost are the runs' own columns (written with each model response); the tool calls are counted from their events
 * (a call refused by the namespace's tool-call quota was not made and is not counted). The namespace's quotas are held
 * to these same figures (./quotas.ts).
 */
export async function usageFigures(
  db: Queryable,
  namespace: string,
  query: { since?: string; until?: string; by?: UsageGrouping },
): Promise<UsageGroup[]> {
  const since = time(query.since, 'since');
  const until = time(query.until, 'until');
  const by = query.by ?? 'namespace';
  const { rows } = await db.query<UsageRow>(
    by === 'tool'
      ? "SELECT e.data->>'name' AS grp, count(DISTINCT r.id) AS runs, count(*) AS tool_calls, 0 AS input_tokens, " +
          '0 AS output_tokens, 0 AS cost_usd FROM mt_runs r JOIN mt_run_events e ON e.run_id = r.id ' +
          "WHERE r.namespace = $1 AND e.type = 'tool-result' AND (e.data->>'code') IS DISTINCT FROM $5 " +
          'AND ($2::timestamptz IS NULL OR r.created_at >= $2) AND ($3::timestamptz IS NULL OR r.created_at < $3) ' +
          'AND $4::text IS NOT NULL GROUP BY 1 ORDER BY 1 NULLS LAST'
      : "SELECT CASE $4::text WHEN 'interaction' THEN r.interaction WHEN 'key' THEN r.started_by_key_id " +
          'ELSE r.namespace END AS grp, count(*) AS runs, ' +
          "coalesce(sum((SELECT count(*) FROM mt_run_events e WHERE e.run_id = r.id AND e.type = 'tool-result' " +
          "AND (e.data->>'code') IS DISTINCT FROM $5)), 0) " +
          'AS tool_calls, coalesce(sum(r.input_tokens), 0) AS input_tokens, ' +
          'coalesce(sum(r.output_tokens), 0) AS output_tokens, coalesce(sum(r.cost_usd), 0) AS cost_usd ' +
          'FROM mt_runs r WHERE r.namespace = $1 AND ($2::timestamptz IS NULL OR r.created_at >= $2) ' +
          'AND ($3::timestamptz IS NULL OR r.created_at < $3) GROUP BY 1 ORDER BY 1 NULLS LAST',
    [namespace, since, until, by, TOOL_CALL_QUOTA_CODE],
  );
  return rows.map((row) => ({
    key: row.grp,
    runs: Number(row.runs),
    toolCalls: Number(row.tool_calls),
    inputTokens: Number(row.input_tokens),
    outputTokens: Number(row.output_tokens),
    costUsd: Number(row.cost_usd),
  }));
}
