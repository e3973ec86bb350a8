import type { Queryable } from '../db/db.js';
import { iso } from '../internal/rows.js';
import type { RunStatus } from './runs.js';

/** The statuses in which a run waits for a person (an approval, a message, an end user's connection). */
export const WAITING_STATUSES: readonly RunStatus[] = ['PendingApproval', 'WaitingForInput', 'PendingAuthorization'];

/** What the console's overview shows of a namespace's runs and approvals (decision 0330). */
export interface RunsOverview {
  /** Runs created since `since`, counted by status. */
  byStatus: { status: RunStatus; count: number }[];
  /** Runs waiting for a person now, by status, with the oldest wait (its run and since when). */
  waiting: { status: RunStatus; count: number; oldestRunId: string; oldestSince: string }[];
  /** Failed runs created since `since`, by error code (most first, 20 codes at most), with the latest failure. */
  failed: { code: string | null; count: number; latest: string }[];
  /** Pending approvals now, and when the oldest was asked for. */
  approvals: { count: number; oldest: string | null };
}

/**
 * The overview of `namespace`'s runs: every part is one statement on an index of `mt_runs` (`namespace, created_at`
 * for the window, `namespace, status, created_at` for the waiting and failed runs) or of `mt_approvals`
 * (`namespace, status, created_at`); `startedByKeyId` narrows it to a runner key's own runs.
 */
export async function runsOverview(
  db: Queryable,
  namespace: string,
  options: { since: string; startedByKeyId?: string },
): Promise<RunsOverview> {
  const mine = options.startedByKeyId ?? null;
  const [byStatus, waiting, failed, approvals] = await Promise.all([
    db.query<{ status: RunStatus; n: number }>(
      'SELECT status, count(*)::int AS n FROM mt_runs WHERE namespace = $1 AND created_at >= $2 ' +
        'AND ($3::text IS NULL OR started_by_key_id = $3) GROUP BY status ORDER BY status',
      [namespace, options.since, mine],
    ),
    db.query<{ status: RunStatus; n: number; oldest_id: string; oldest_since: Date }>(
      // The oldest wait of each status: the run least recently updated (a waiting run is updated when it starts to wait).
      'SELECT status, count(*)::int AS n, (array_agg(id ORDER BY updated_at, id))[1] AS oldest_id, ' +
        'min(updated_at) AS oldest_since FROM mt_runs WHERE namespace = $1 AND status = ANY($2::text[]) ' +
        'AND ($3::text IS NULL OR started_by_key_id = $3) GROUP BY status ORDER BY status',
      [namespace, WAITING_STATUSES, mine],
    ),
    db.query<{ code: string | null; n: number; latest: Date }>(
      "SELECT error_code AS code, count(*)::int AS n, max(created_at) AS latest FROM mt_runs WHERE namespace = $1 AND status = 'Failed' " +
        'AND created_at >= $2 AND ($3::text IS NULL OR started_by_key_id = $3) ' +
        'GROUP BY error_code ORDER BY n DESC, code LIMIT 20',
      [namespace, options.since, mine],
    ),
    db.query<{ n: number; oldest: Date | null }>(
      "SELECT count(*)::int AS n, min(created_at) AS oldest FROM mt_approvals WHERE namespace = $1 AND status = 'Pending'",
      [namespace],
    ),
  ]);
  return {
    byStatus: byStatus.rows.map((r) => ({ status: r.status, count: r.n })),
    waiting: waiting.rows.map((r) => ({
      status: r.status,
      count: r.n,
      oldestRunId: r.oldest_id,
      oldestSince: iso(r.oldest_since),
    })),
    failed: failed.rows.map((r) => ({ code: r.code, count: r.n, latest: iso(r.latest) })),
    approvals: {
      count: approvals.rows[0]?.n ?? 0,
      oldest: approvals.rows[0]?.oldest ? iso(approvals.rows[0].oldest) : null,
    },
  };
}

/** The figures the overview draws (decision 0356): runs an hour by status, approval waits, tools, spend. */
export interface OverviewCharts {
  /** Runs created since `since7d`, counted by the hour they were created in (its start) and status. */
  hourly: { hour: string; status: RunStatus; count: number }[];
  /** Approvals answered (approved or rejected) that were asked for since `since7d`: how long they waited, in ms. */
  approvalWaits: { count: number; p50Ms: number; p95Ms: number } | null;
  /** Tool results of the runs created since `since24h`, by tool (most calls first, 12 at most). */
  tools: { name: string; calls: number; errors: number; p95Ms: number }[];
  /** Tokens (in + out) and cost of the runs created since `since24h`, by interaction (most tokens first, 12 at most). */
  spend: { interaction: string; runs: number; tokens: number; costUsd: number }[];
}

/**
 * The overview's charts: four statements, each on an index of `mt_runs` (`namespace, created_at`) or `mt_approvals`
 * (`namespace, status, created_at`), the tools' through the events of the day's runs (`run_id, seq`).
 * `startedByKeyId` narrows runs to a runner key's own (and leaves out the approvals).
 */
export async function overviewCharts(
  db: Queryable,
  namespace: string,
  options: { since7d: string; since24h: string; startedByKeyId?: string },
): Promise<OverviewCharts> {
  const mine = options.startedByKeyId ?? null;
  const [hourly, waits, tools, spend] = await Promise.all([
    db.query<{ hour: Date; status: RunStatus; n: number }>(
      "SELECT date_trunc('hour', created_at) AS hour, status, count(*)::int AS n FROM mt_runs " +
        'WHERE namespace = $1 AND created_at >= $2 AND ($3::text IS NULL OR started_by_key_id = $3) ' +
        'GROUP BY 1, 2 ORDER BY 1, 2',
      [namespace, options.since7d, mine],
    ),
    mine !== null
      ? Promise.resolve({ rows: [] })
      : db.query<{ n: number; p50: number | null; p95: number | null }>(
          'SELECT count(*)::int AS n, ' +
            'percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM answered_at - created_at) * 1000) AS p50, ' +
            'percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM answered_at - created_at) * 1000) AS p95 ' +
            "FROM mt_approvals WHERE namespace = $1 AND status IN ('Approved', 'Rejected') AND created_at >= $2 " +
            'AND answered_at IS NOT NULL',
          [namespace, options.since7d],
        ),
    db.query<{ name: string; n: number; errors: number; p95: number | null }>(
      "SELECT e.data->>'name' AS name, count(*)::int AS n, " +
        "count(*) FILTER (WHERE (e.data->>'ok') IS DISTINCT FROM 'true')::int AS errors, " +
        "percentile_cont(0.95) WITHIN GROUP (ORDER BY coalesce((e.data->>'durationMs')::float8, 0)) AS p95 " +
        "FROM mt_runs r JOIN mt_run_events e ON e.run_id = r.id AND e.type = 'tool-result' " +
        'WHERE r.namespace = $1 AND r.created_at >= $2 AND ($3::text IS NULL OR r.started_by_key_id = $3) ' +
        'GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 12',
      [namespace, options.since24h, mine],
    ),
    db.query<{ interaction: string; n: number; tokens: string; cost: string }>(
      'SELECT interaction, count(*)::int AS n, sum(input_tokens + output_tokens)::text AS tokens, ' +
        'sum(cost_usd)::text AS cost FROM mt_runs WHERE namespace = $1 AND created_at >= $2 ' +
        'AND ($3::text IS NULL OR started_by_key_id = $3) GROUP BY interaction ' +
        'ORDER BY sum(input_tokens + output_tokens) DESC, interaction LIMIT 12',
      [namespace, options.since24h, mine],
    ),
  ]);
  const w = waits.rows[0] as { n: number; p50: number | null; p95: number | null } | undefined;
  return {
    hourly: hourly.rows.map((r) => ({ hour: iso(r.hour), status: r.status, count: r.n })),
    approvalWaits:
      w === undefined || w.n === 0 ? null : { count: w.n, p50Ms: Number(w.p50 ?? 0), p95Ms: Number(w.p95 ?? 0) },
    tools: tools.rows.map((r) => ({
      name: r.name ?? '(unnamed)',
      calls: r.n,
      errors: r.errors,
      p95Ms: Number(r.p95 ?? 0),
    })),
    spend: spend.rows.map((r) => ({
      interaction: r.interaction,
      runs: r.n,
      tokens: Number(r.tokens ?? 0),
      costUsd: Number(r.cost ?? 0),
    })),
  };
}
