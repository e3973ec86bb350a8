import { RUN_STATUSES, TERMINAL_RUN_STATUSES } from '@maitento/sdk/wire';
import type { Queryable } from '../db/db.js';
import { iso } from '../internal/rows.js';
import type { Pin } from '../resources/hash.js';
import { WAKE_CHANNEL } from '../wake/notify.js';
import { outboxCte, outboxWoken } from '../webhooks/webhooks.js';

// Where a run stands, and the statuses it does not leave: declared once, on the wire (@maitento/sdk's
// wire/constants.ts, the lowest package that needs them: it depends on no other package of this repository).
export { RUN_STATUSES, TERMINAL_RUN_STATUSES };

/** One of {@link RUN_STATUSES}. */
export type RunStatus = (typeof RUN_STATUSES)[number];

/** A run as stored in `mt_runs`. */
export interface RunRecord {
  id: string;
  namespace: string;
  interaction: string;
  interactionVersion: number;
  versions: Pin[];
  inputs: Record<string, unknown>;
  interactive: boolean;
  status: RunStatus;
  result: string | null;
  /** `result` is the JSON text of an object matching the interaction's `result.schema` (schema 14). */
  resultStructured: boolean;
  errorCode: string | null;
  errorMessage: string | null;
  lastSeq: number;
  cancelRequested: boolean;
  startedByKeyId: string | null;
  /** The fencing token of the attempt that last claimed the run (see {@link claimRun}). */
  claim: string | null;
  /** The run's OpenTelemetry trace id (docs/telemetry.md); null when it started with OpenTelemetry off. */
  traceId: string | null;
  /** The span id its root span (`invoke_agent`) has, chosen when it started. */
  rootSpanId: string | null;
  /** The span of the incoming `traceparent` its root span is a child of, if any. */
  traceParentSpanId: string | null;
  /** The run whose tool call started this one (an agent handed a task, schema 15), or null. */
  parentRunId: string | null;
  /** The parent's call that started it: its model turn and index in the turn. */
  parentCall: { step: number; index: number } | null;
  /** The agent this run plays when not the interaction's own (a child run's), or null. */
  agent: string | null;
  /**
   * 0 for a run started by a person or a program, the parent's + 1 for a child, the ended run's + 1 for a run a
   * chaining trigger started (schema 36).
   */
  depth: number;
  /**
   * What started it when no request did (schema 36): a schedule's tick, a webhook's delivery, or another run's end
   * (`{ kind: "trigger", name, version, eventId, runId, status }`); null for a run a request started.
   */
  origin: Record<string, unknown> | null;
  /** The end user the run acts for (its OAuth2 connectors use this person's connections, schema 28), or null. */
  endUser: string | null;
  /** What its model turns spent so far (schema 30): tokens in and out, and their cost in US dollars. */
  usage: RunUsage;
  /** What it may spend (schema 30), or null: no budget. */
  budget: RunBudget | null;
  createdAt: string;
  updatedAt: string;
}

/** What a run's model turns spent: tokens in and out, and their cost in US dollars (0 when no price is known). */
export interface RunUsage {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** What a run may spend (docs/runs.md "Usage and budgets"): a limit on tokens (in + out), on cost, or both. */
export interface RunBudget {
  tokens: number | null;
  costUsd: number | null;
  /** What happens when the next model turn would pass it: the run waits for a person (PendingBudget) or fails. */
  onExceeded: 'wait' | 'fail';
}

/** The budget columns of a row as a {@link RunBudget}, or null when it has none. */
export function budgetOf(row: {
  budget_tokens: string | number | null;
  budget_cost_usd: string | number | null;
  budget_on_exceeded: string | null;
}): RunBudget | null {
  if (row.budget_tokens === null && row.budget_cost_usd === null) return null;
  return {
    tokens: row.budget_tokens === null ? null : Number(row.budget_tokens),
    costUsd: row.budget_cost_usd === null ? null : Number(row.budget_cost_usd),
    onExceeded: row.budget_on_exceeded === 'fail' ? 'fail' : 'wait',
  };
}

/** The usage columns of a row as a {@link RunUsage} (bigint and numeric are read as text). */
export function usageOf(row: {
  input_tokens: string | number;
  output_tokens: string | number;
  cost_usd: string | number;
}): RunUsage {
  return {
    inputTokens: Number(row.input_tokens),
    outputTokens: Number(row.output_tokens),
    costUsd: Number(row.cost_usd),
  };
}

/** One stored step of a run. */
export interface RunEventRecord {
  seq: number;
  type: string;
  data: Record<string, unknown>;
  at: string;
}

/** An event to append: its type and data. */
export interface NewRunEvent {
  type: string;
  data: Record<string, unknown>;
}

/**
 * Who may write a run: the attempt whose fencing token the run holds, while it is Running (with `expectSeq`: only
 * if no event was stored since and no cancel was requested; with `live`: only if no cancel was requested), or
 * anyone while the run has one of `statuses`.
 */
export type RunFence = { claim: string; expectSeq?: number; live?: boolean } | { statuses: RunStatus[] };

/** A status change written with events. */
export interface RunStatusChange {
  status: RunStatus;
  result?: string | null;
  /** With `result`: it is the JSON text of a structured result. */
  structured?: boolean;
  error?: { code: string; message: string } | null;
}

export const COLUMNS =
  'id, namespace, interaction, interaction_version, versions, inputs, interactive, status, result, result_structured, ' +
  'error_code, error_message, last_seq, cancel_requested, started_by_key_id, claim, trace_id, root_span_id, ' +
  'trace_parent_span_id, parent_run_id, parent_step, parent_call_index, agent, depth, end_user, input_tokens, ' +
  'output_tokens, cost_usd, budget_tokens, budget_cost_usd, budget_on_exceeded, origin, created_at, updated_at';

export interface RunRow {
  id: string;
  namespace: string;
  interaction: string;
  interaction_version: number;
  versions: Pin[];
  inputs: Record<string, unknown>;
  interactive: boolean;
  status: RunStatus;
  result: string | null;
  result_structured: boolean;
  error_code: string | null;
  error_message: string | null;
  last_seq: number;
  cancel_requested: boolean;
  started_by_key_id: string | null;
  claim: string | null;
  trace_id: string | null;
  root_span_id: string | null;
  trace_parent_span_id: string | null;
  parent_run_id: string | null;
  parent_step: number | null;
  parent_call_index: number | null;
  agent: string | null;
  depth: number;
  end_user: string | null;
  input_tokens: string | number;
  output_tokens: string | number;
  cost_usd: string | number;
  budget_tokens: string | number | null;
  budget_cost_usd: string | number | null;
  budget_on_exceeded: string | null;
  origin?: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
}

export function toRecord(row: RunRow): RunRecord {
  return {
    id: row.id,
    namespace: row.namespace,
    interaction: row.interaction,
    interactionVersion: row.interaction_version,
    versions: row.versions,
    inputs: row.inputs,
    interactive: row.interactive,
    status: row.status,
    result: row.result,
    resultStructured: row.result_structured,
    errorCode: row.error_code,
    errorMessage: row.error_message,
    lastSeq: row.last_seq,
    cancelRequested: row.cancel_requested,
    startedByKeyId: row.started_by_key_id,
    claim: row.claim,
    traceId: row.trace_id,
    rootSpanId: row.root_span_id,
    traceParentSpanId: row.trace_parent_span_id,
    parentRunId: row.parent_run_id,
    parentCall:
      row.parent_step === null || row.parent_call_index === null
        ? null
        : { step: row.parent_step, index: row.parent_call_index },
    agent: row.agent,
    depth: row.depth,
    endUser: row.end_user ?? null,
    origin: row.origin ?? null,
    usage: usageOf(row),
    budget: budgetOf(row),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

/**
 * Stores a new run (status Running) with its first event (seq 1) in one statement, so that a run is never
 * seen without it, and wakes `runs` and `run:<id>` at its commit; resolves with the run as stored.
 */
export async function insertRun(
  db: Queryable,
  run: Pick<
    RunRecord,
    'id' | 'namespace' | 'interaction' | 'interactionVersion' | 'versions' | 'inputs' | 'interactive'
  > & {
    /** The end user the run acts for (a child: its parent's). */
    endUser?: string | null;
    startedByKeyId?: string;
    /** The run's trace ids, when OpenTelemetry is on. */
    trace?: { traceId: string; rootSpanId: string; parentSpanId: string | null };
    /** A child run: the parent's call that starts it, the agent it plays and its depth. */
    child?: { parentRunId: string; step: number; index: number; agent: string; depth: number };
    /** What it may spend (its interaction's budget, or the one it was started with). */
    budget?: RunBudget | null;
    /** A run no request started: what did (schema 36). */
    origin?: Record<string, unknown>;
    /** A top-level run's depth when not 0: a run a chaining trigger started (the ended run's + 1). */
    depth?: number;
  },
  first: NewRunEvent,
): Promise<RunRecord> {
  const child = run.child;
  const text =
    'WITH run AS (INSERT INTO mt_runs (id, namespace, interaction, interaction_version, versions, inputs, ' +
    'interactive, status, started_by_key_id, last_seq, trace_id, root_span_id, trace_parent_span_id, ' +
    'parent_run_id, parent_step, parent_call_index, agent, depth, end_user, budget_tokens, budget_cost_usd, ' +
    'budget_on_exceeded, origin) ' +
    "VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, 'Running', " +
    `$8, 1, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23::jsonb) RETURNING ${COLUMNS}), ` +
    'added AS (INSERT INTO mt_run_events (run_id, seq, type, data) SELECT id, 1, $9, $10::json FROM run) ' +
    `SELECT *, pg_notify('${WAKE_CHANNEL}', 'runs') AS woken_runs, pg_notify('${WAKE_CHANNEL}', 'run:' || id::text) AS woken`;
  const values = [
    run.id,
    run.namespace,
    run.interaction,
    run.interactionVersion,
    JSON.stringify(run.versions),
    JSON.stringify(run.inputs),
    run.interactive,
    run.startedByKeyId ?? null,
    first.type,
    JSON.stringify(first.data),
    run.trace?.traceId ?? null,
    run.trace?.rootSpanId ?? null,
    run.trace?.parentSpanId ?? null,
    child?.parentRunId ?? null,
    child?.step ?? null,
    child?.index ?? null,
    child?.agent ?? null,
    child?.depth ?? run.depth ?? 0,
    run.endUser ?? null,
    run.budget?.tokens ?? null,
    run.budget?.costUsd ?? null,
    run.budget == null ? null : run.budget.onExceeded,
    run.origin === undefined ? null : JSON.stringify(run.origin),
  ];
  const { rows } = await db.query<RunRow>(`${text} FROM run`, values);
  return toRecord(rows[0]!);
}

/** Reads one run; `namespace` undefined reads it whatever its namespace (workers). */
export async function findRun(db: Queryable, id: string, namespace?: string): Promise<RunRecord | undefined> {
  const { rows } = await db.query<RunRow>(
    `SELECT ${COLUMNS} FROM mt_runs WHERE id = $1 AND ($2::text IS NULL OR namespace = $2)`,
    [id, namespace ?? null],
  );
  return rows[0] && toRecord(rows[0]);
}

/**
 * How long {@link watchRun} marks a run watched. A stream renews its mark every `RUN_WATCH_RENEW_MS` (timers.ts, less
 * than half of this) while it is open; a mark left by a stream that ended lapses after this long (its run's appends
 * notify until then).
 */
export const RUN_WATCH_SECONDS = 60;

/**
 * Marks run `id` watched for {@link RUN_WATCH_SECONDS}: until then each of its appends wakes `run:<id>` at its
 * commit; an unwatched run's appends wake nobody (decision 0365: a notifying commit holds PostgreSQL's notify lock
 * through its write-ahead log flush, so every notifying commit of the database waits for the one before it). Call it
 * before reading the run's events: an append that committed before the mark is in that read, and one that commits
 * after it notifies (the mark and the append update the same row, so an append racing the mark waits for it and
 * sees it, or the mark waits for the append, which is then in the read). `updated_at` is left as it is.
 */
export async function watchRun(db: Queryable, id: string): Promise<void> {
  // Written only when the mark has less than half its time left: many streams of one run write it about once a
  // renewal period, and a statement that matches no row commits without waiting for a flush. Either way the mark
  // lasts at least RUN_WATCH_SECONDS / 2 after this answers.
  await db.query(
    'UPDATE mt_runs SET watched_until = now() + make_interval(secs => $2) WHERE id = $1 ' +
      'AND (watched_until IS NULL OR watched_until < now() + make_interval(secs => $3))',
    [id, RUN_WATCH_SECONDS, RUN_WATCH_SECONDS / 2],
  );
}

/** Whether run `id` exists in `namespace`, without reading its inputs or result. */
export async function runExists(db: Queryable, id: string, namespace: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM mt_runs WHERE id = $1 AND namespace = $2', [id, namespace]);
  return rows.length > 0;
}

/** A run as a list shows it: no inputs, no versions, and its result cut to {@link RESULT_SUMMARY_CHARS} characters. */
export interface RunSummaryRecord {
  id: string;
  interaction: string;
  interactionVersion: number;
  interactive: boolean;
  status: RunStatus;
  /** The first {@link RESULT_SUMMARY_CHARS} characters of the result. */
  resultSummary: string | null;
  /** The result is longer than its summary. */
  resultTruncated: boolean;
  errorCode: string | null;
  errorMessage: string | null;
  /** The id of the approval the run waits on, if any (a child run's, for a parent waiting on its child). */
  pendingApprovalId: string | null;
  /** The run whose tool call started this one, or null. */
  parentRunId: string | null;
  /** The agent a child run plays, or null. */
  agent: string | null;
  /** What its model turns spent so far. */
  usage: RunUsage;
  createdAt: string;
  updatedAt: string;
}

/** How many characters of a run's result a list shows. */
export const RESULT_SUMMARY_CHARS = 200;

interface RunSummaryRow {
  id: string;
  interaction: string;
  interaction_version: number;
  interactive: boolean;
  status: RunStatus;
  result_summary: string | null;
  result_truncated: boolean | null;
  error_code: string | null;
  error_message: string | null;
  pending_approval_id: string | null;
  parent_run_id: string | null;
  agent: string | null;
  input_tokens: string | number;
  output_tokens: string | number;
  cost_usd: string | number;
  created_at: Date;
  updated_at: Date;
}

/**
 * One page of runs of a namespace, newest first, after the `(createdAt, id)` cursor, as summaries: the
 * inputs and versions are not read, and of the result only its first characters (a slice of a long value).
 */
export async function listRunSummaries(
  db: Queryable,
  namespace: string,
  filter: {
    interaction?: string;
    /** Only runs that pinned this agent (a version of it). */
    agent?: string;
    status?: RunStatus;
    limit: number;
    after?: { createdAt: string; id: string };
    /** Only runs whose tree this key started (a runner key's own runs). */
    startedByKeyId?: string;
    /** Only runs created at or after this time (ISO 8601). */
    since?: string;
    /** Only runs created before this time (ISO 8601). */
    until?: string;
    /** Only runs whose id holds this text (the console's search). */
    idContains?: string;
    /** Only failed runs with this error code. */
    errorCode?: string;
    /**
     * Only runs that called this tool: a `tool-call-started` event of that name, or an `approval-requested` one (a
     * call that waits on, or was refused by, a person). No index of its own: each run the list walks newest first
     * (`mt_runs_namespace_created`) is probed through the events' key (`run_id, seq`), so a tool few runs call reads
     * the namespace's runs up to the page's end (docs/performance.md).
     */
    tool?: string;
  },
): Promise<RunSummaryRecord[]> {
  const { rows } = await db.query<RunSummaryRow>(
    'SELECT r.id, r.interaction, r.interaction_version, r.interactive, r.status, ' +
      `left(r.result, ${RESULT_SUMMARY_CHARS}) AS result_summary, ` +
      `char_length(left(r.result, ${RESULT_SUMMARY_CHARS + 1})) > ${RESULT_SUMMARY_CHARS} AS result_truncated, ` +
      'r.error_code, r.error_message, r.created_at, r.updated_at, r.parent_run_id, r.agent, ' +
      'r.input_tokens, r.output_tokens, r.cost_usd, ' +
      // A PendingApproval run's approval (maybe a child's) is read after, for those rows only (pendingDownTheChain).
      "(SELECT a.id FROM mt_approvals a WHERE a.run_id = r.id AND a.status = 'Pending' LIMIT 1) AS pending_approval_id " +
      'FROM mt_runs r WHERE r.namespace = $1 AND ($2::text IS NULL OR r.interaction = $2) ' +
      'AND ($3::text IS NULL OR r.status = $3) ' +
      'AND ($4::timestamptz IS NULL OR (r.created_at, r.id) < ($4::timestamptz, $5::uuid)) ' +
      "AND ($7::text IS NULL OR r.versions @> jsonb_build_array(jsonb_build_object('kind', 'agent', 'name', $7::text))) " +
      'AND ($8::text IS NULL OR r.started_by_key_id = $8) ' +
      'AND ($9::timestamptz IS NULL OR r.created_at >= $9) AND ($10::timestamptz IS NULL OR r.created_at < $10) ' +
      'AND ($11::text IS NULL OR strpos(r.id::text, lower($11)) > 0) AND ($12::text IS NULL OR r.error_code = $12) ' +
      'AND ($13::text IS NULL OR EXISTS (SELECT 1 FROM mt_run_events e WHERE e.run_id = r.id ' +
      "AND e.type IN ('tool-call-started', 'approval-requested') " +
      "AND coalesce(e.data->>'name', e.data->'approval'->>'functionName') = $13)) " +
      'ORDER BY r.created_at DESC, r.id DESC LIMIT $6',
    [
      namespace,
      filter.interaction ?? null,
      filter.status ?? null,
      filter.after?.createdAt ?? null,
      filter.after?.id ?? null,
      filter.limit,
      filter.agent ?? null,
      filter.startedByKeyId ?? null,
      filter.since ?? null,
      filter.until ?? null,
      filter.idContains ?? null,
      filter.errorCode ?? null,
      filter.tool ?? null,
    ],
  );
  const waiting = rows.filter((row) => row.status === 'PendingApproval').map((row) => row.id);
  const down = waiting.length === 0 ? new Map<string, string>() : await pendingDownTheChain(db, waiting);
  return rows.map((row) => ({
    id: row.id,
    interaction: row.interaction,
    interactionVersion: row.interaction_version,
    interactive: row.interactive,
    status: row.status,
    resultSummary: row.result_summary,
    resultTruncated: row.result_truncated === true,
    errorCode: row.error_code,
    errorMessage: row.error_message,
    pendingApprovalId: row.status === 'PendingApproval' ? (down.get(row.id) ?? null) : row.pending_approval_id,
    parentRunId: row.parent_run_id,
    agent: row.agent,
    usage: usageOf(row),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  }));
}

/**
 * The approval each of these PendingApproval runs waits on: its own pending approval, else (a parent waiting on its
 * child) the oldest pending one down its chain of child runs. A statement of its own, not a subquery of the list's:
 * the planner costs a recursive subquery at thousands per row of the list, and a list statement costed over
 * `jit_above_cost` spent 300-600 ms compiling JIT code to read 51 rows in 0.2 ms (docs/performance.md).
 */
async function pendingDownTheChain(db: Queryable, runIds: string[]): Promise<Map<string, string>> {
  const { rows } = await db.query<{ root: string; id: string }>(
    'WITH RECURSIVE down(root, id) AS (SELECT t.id, t.id FROM unnest($1::uuid[]) AS t(id) UNION ALL ' +
      'SELECT down.root, c.id FROM mt_runs c JOIN down ON c.parent_run_id = down.id) ' +
      'SELECT DISTINCT ON (down.root) down.root, a.id FROM mt_approvals a JOIN down ON a.run_id = down.id ' +
      "WHERE a.status = 'Pending' ORDER BY down.root, a.created_at",
    [runIds],
  );
  return new Map(rows.map((row) => [row.root, row.id]));
}

/** What an append wrote and read: the run's new `last_seq`, and the cache epoch its statement read. */
export interface RunAppend {
  seq: number;
  /**
   * The cache epoch (`mt_cache_epoch`, schema 7) as the append's statement read it: every cache write committed
   * before the append began is at or below it. A tool call that follows its `tool-call-started` at once takes it as
   * its store cache's sync (`StoreCache.observe`) instead of a round trip of its own.
   */
  epoch: bigint;
}

/**
 * Appends events to a run (numbered from its `last_seq`) and applies an optional status change, only if
 * `fence` holds; resolves with what it wrote and read ({@link RunAppend}), or false (nothing written) when it does
 * not. One statement (the UPDATE and the insert as data-modifying CTEs, the read of the cache epoch, and the wake-up
 * `run:<id>` sent at commit while a stream watches the run: {@link watchRun}), so it is atomic on its own: one round
 * trip, no transaction needed; in a caller's transaction it commits or rolls back with it.
 */
export async function appendRunEvents(
  tx: Queryable,
  runId: string,
  fence: RunFence,
  events: NewRunEvent[],
  change?: RunStatusChange,
): Promise<RunAppend | false> {
  const { rows } = await tx.query<{ last_seq: number; epoch: unknown }>(
    `${APPEND} SELECT last_seq, CASE WHEN watched_until > now() THEN pg_notify('${WAKE_CHANNEL}', 'run:' || $1::text) END AS woken, ` +
      `${outboxWoken('hooked')}, ${chainedWoken}, ` +
      '(SELECT epoch FROM mt_cache_epoch) AS epoch FROM run',
    appendValues(runId, fence, events, change),
    // Every step of every run makes it: prepared once per connection, it is no longer parsed and planned each time.
    { name: 'mt_append_run_events_watched' },
  );
  const row = rows[0];
  if (row === undefined) return false;
  return { seq: row.last_seq, epoch: BigInt(String(row.epoch)) };
}

// The append's CTEs: `run` (the run row's update, fenced) and `added` (its events); $1…$17 (appendValues). The
// UPDATE takes the run row's lock, as a cancel's does (requestCancel): a fence on `cancel_requested` is decided
// after any cancel that committed first, and a cancel waits for the append that locked the row before it.
const APPEND =
  'WITH run AS (UPDATE mt_runs SET last_seq = last_seq + $2, updated_at = now(), ' +
  // What the appended model responses spent (schema 30), added in the same statement: never behind the journal.
  'input_tokens = input_tokens + $15, output_tokens = output_tokens + $16, cost_usd = cost_usd + $17::numeric, ' +
  'status = COALESCE($3, status), ' +
  'result = CASE WHEN $4::boolean THEN $5 ELSE result END, ' +
  'result_structured = CASE WHEN $4::boolean THEN $13 ELSE result_structured END, ' +
  'error_code = CASE WHEN $4::boolean THEN $6 ELSE error_code END, ' +
  'error_message = CASE WHEN $4::boolean THEN $7 ELSE error_message END ' +
  "WHERE id = $1 AND (CASE WHEN $8::boolean THEN claim = $9 AND status = 'Running' " +
  'ELSE status = ANY($10::text[]) END) AND ($11::int IS NULL OR last_seq = $11::int) ' +
  'AND NOT ($14::boolean AND cancel_requested) ' +
  'RETURNING id, namespace, interaction, interaction_version, status, error_code, last_seq, parent_run_id, watched_until), ' +
  'added AS (INSERT INTO mt_run_events (run_id, seq, type, data) ' +
  'SELECT $1, run.last_seq - $2 + e.n, e.type, e.data FROM run, ' +
  'json_to_recordset($12::json) AS e(n int, type text, data json)), ' +
  // The webhooks' outbox (docs/notifications.md): a status change to waiting or ended is an event, written with it.
  outboxCte('hooked', 'run', {
    namespace: 'run.namespace',
    type:
      "CASE $3::text WHEN 'PendingApproval' THEN 'run.waiting' WHEN 'WaitingForInput' THEN 'run.waiting' " +
      "WHEN 'PendingBudget' THEN 'run.waiting' " +
      "WHEN 'Completed' THEN 'run.completed' WHEN 'Failed' THEN 'run.failed' END",
    data:
      "json_build_object('runId', run.id, 'namespace', run.namespace, 'interaction', run.interaction, " +
      "'interactionVersion', run.interaction_version, 'status', run.status, 'errorCode', run.error_code)",
  }) +
  // The chaining triggers' deliveries owed (docs/schedules-and-triggers.md, schema 36): a top-level run's end that a
  // trigger's `on` names is a `pending` delivery keyed by the trigger and the run, written with the end itself (the
  // latest enabled version of each trigger of the namespace decides). The chaining loop starts each once. Without an
  // end in this append, the one-time filter is false and nothing is read.
  ', chained AS (INSERT INTO mt_trigger_deliveries (namespace, trigger, event_id, version, status) ' +
  "SELECT run.namespace, t.name, run.id::text, t.version, 'pending' FROM run CROSS JOIN LATERAL (" +
  'SELECT DISTINCT ON (v.name) v.name, v.version, v.hash, v.resource FROM mt_resource_versions v ' +
  "WHERE v.namespace = run.namespace AND v.kind = 'trigger' AND v.enabled ORDER BY v.name, v.version DESC) t " +
  "WHERE $3::text IN ('Completed', 'Failed') AND run.parent_run_id IS NULL AND t.hash <> 'deleted' " +
  "AND t.resource->'on'->>'runCompleted' = run.interaction AND (t.resource->'on'->'statuses')::jsonb ? run.status " +
  "AND (t.resource->>'enabled')::boolean ON CONFLICT DO NOTHING RETURNING 1)";

// Wakes `triggers` at commit when the append owed a chaining trigger a delivery.
const chainedWoken =
  `(SELECT count(woken::text) FROM (SELECT pg_notify('${WAKE_CHANNEL}', 'triggers') AS woken ` +
  'FROM (SELECT 1 FROM chained LIMIT 1) one) n) AS chained_woken';

function appendValues(runId: string, fence: RunFence, events: NewRunEvent[], change?: RunStatusChange): unknown[] {
  const byClaim = 'claim' in fence;
  return [
    runId,
    events.length,
    change?.status ?? null,
    change !== undefined && (change.result !== undefined || change.error !== undefined),
    change?.result ?? null,
    change?.error?.code ?? null,
    change?.error?.message ?? null,
    byClaim,
    byClaim ? fence.claim : null,
    byClaim ? [] : fence.statuses,
    byClaim ? (fence.expectSeq ?? null) : null,
    JSON.stringify(events.map((event, index) => ({ n: index + 1, type: event.type, data: event.data }))),
    change?.structured === true,
    byClaim && (fence.expectSeq !== undefined || fence.live === true),
    ...spent(events),
  ];
}

/**
 * What the model responses among `events` spent: input and output tokens, and cost in US dollars (as text, exact
 * for the numeric column). A response's `usage` and `costUsd` are those its model turn reported (docs/runs.md).
 */
export function spent(events: NewRunEvent[]): [number, number, string] {
  let input = 0;
  let output = 0;
  let cost = 0;
  for (const event of events) {
    if (event.type !== 'model-response') continue;
    const usage = event.data.usage as { inputTokens?: unknown; outputTokens?: unknown } | undefined;
    if (typeof usage?.inputTokens === 'number') input += usage.inputTokens;
    if (typeof usage?.outputTokens === 'number') output += usage.outputTokens;
    if (typeof event.data.costUsd === 'number') cost += event.data.costUsd;
  }
  return [input, output, String(cost)];
}

/**
 * Sets the budget of run `id` while it waits for one (PendingBudget), in the caller's transaction (with the
 * `budget-extended` event that makes it Running); resolves with whether it did.
 */
export async function setRunBudget(tx: Queryable, id: string, budget: RunBudget): Promise<boolean> {
  const { rowCount } = await tx.query(
    'UPDATE mt_runs SET budget_tokens = $2, budget_cost_usd = $3, budget_on_exceeded = $4 ' +
      "WHERE id = $1 AND status = 'PendingBudget'",
    [id, budget.tokens, budget.costUsd, budget.onExceeded],
  );
  return (rowCount ?? 0) > 0;
}

/** The events of a run with `seq > after`, in order: at most `limit` of them (all when undefined). */
export async function listRunEvents(
  db: Queryable,
  runId: string,
  after = 0,
  limit?: number,
): Promise<RunEventRecord[]> {
  const { rows } = await db.query<{ seq: number; type: string; data: Record<string, unknown>; created_at: Date }>(
    'SELECT seq, type, data, created_at FROM mt_run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
    [runId, after, limit ?? null],
  );
  return rows.map((row) => ({ seq: row.seq, type: row.type, data: row.data, at: iso(row.created_at) }));
}

/**
 * Whether any run is Running (in any namespace): a Running run has a job queued, retried or held, so the queue has
 * work even when the job queue's cached counts (refreshed by its monitor) still say none.
 */
export async function anyRunRunning(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ any: boolean }>(
    "SELECT EXISTS (SELECT 1 FROM mt_runs WHERE status = 'Running') AS any",
  );
  return rows[0]?.any === true;
}

/**
 * Claims a Running run for one attempt: sets its fencing token to `token`, so the writes of any earlier attempt
 * (a stalled worker whose job was retried elsewhere) fail from now on, and reads its events in the same statement.
 * No condition on the previous token: pg-boss admits one active job per run. Resolves with the run and its
 * events, or undefined when it is not Running.
 *
 * Its commit does not wait for the write-ahead log's flush (`synchronous_commit` off for its own transaction, as
 * Db.relaxed's are): the attempt's first append, which does wait, makes it durable with it; a claim lost with a crash
 * of PostgreSQL before then leaves the run to the job's retry, as a lost fetch does (decision 0245).
 */
export async function claimRun(
  db: Queryable,
  runId: string,
  token: string,
): Promise<{ run: RunRecord; events: RunEventRecord[] } | undefined> {
  const { rows } = await db.query<
    RunRow & { events: { seq: number; type: string; data: Record<string, unknown>; at: string }[] | null }
  >(
    `WITH run AS (UPDATE mt_runs SET claim = $2 WHERE id = $1 AND status = 'Running' RETURNING ${COLUMNS}) ` +
      "SELECT run.*, (SELECT json_agg(json_build_object('seq', seq, 'type', type, 'data', data, 'at', created_at) " +
      'ORDER BY seq) FROM mt_run_events WHERE run_id = $1) AS events, ' +
      "set_config('synchronous_commit', 'off', true) AS relaxed FROM run",
    [runId, token],
    // Every run's pickup makes it: prepared once per connection.
    { name: 'mt_claim_run_relaxed' },
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  return { run: toRecord(row), events: eventsOf(row.events) };
}

type EventJson = { seq: number; type: string; data: Record<string, unknown>; at: string };

function eventsOf(events: EventJson[] | null): RunEventRecord[] {
  return (events ?? []).map((e) => ({ seq: e.seq, type: e.type, data: e.data, at: iso(new Date(e.at)) }));
}

/** The runs among `ids` whose cancel was requested. */
export async function cancelRequested(db: Queryable, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM mt_runs WHERE id = ANY($1::uuid[]) AND cancel_requested',
    [ids],
  );
  return rows.map((row) => row.id);
}

/**
 * Marks a run's cancel as requested if it has not ended, and wakes `cancel:<id>` at commit; resolves with the run as
 * it was, or undefined.
 */
export async function requestCancel(db: Queryable, namespace: string, id: string): Promise<RunRecord | undefined> {
  const { rows } = await db.query<RunRow>(
    `WITH run AS (UPDATE mt_runs SET cancel_requested = true, updated_at = now() WHERE id = $1 AND namespace = $2 ` +
      `AND status IN ('Running', 'PendingApproval', 'PendingAuthorization', 'PendingBudget', 'PendingLimit', 'WaitingForInput') RETURNING ${COLUMNS}) ` +
      `SELECT *, pg_notify('${WAKE_CHANNEL}', 'cancel:' || id::text) AS woken FROM run`,
    [id, namespace],
  );
  return rows[0] && toRecord(rows[0]);
}

/**
 * The runs waiting for a limit's window (PendingLimit) whose wait is over: the `until` of their last event (the
 * `limit-waiting` stored with the status) is not after now (docs/limits.md). At most `limit` of them.
 */
export async function dueLimitWaits(db: Queryable, limit = 100): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    "SELECT r.id FROM mt_runs r JOIN mt_run_events e ON e.run_id = r.id AND e.seq = r.last_seq WHERE r.status = 'PendingLimit' " +
      "AND e.type = 'limit-waiting' AND (e.data->>'until')::timestamptz <= now() LIMIT $1",
    [limit],
  );
  return rows.map((row) => row.id);
}

/**
 * The conversations waiting for a message whose idle limit has passed: the `idleUntil` of their last event (the
 * `input-requested` stored with the WaitingForInput status) is before now. At most `limit` of them.
 */
export async function idleConversations(db: Queryable, limit = 100): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    "SELECT r.id FROM mt_runs r JOIN mt_run_events e ON e.run_id = r.id AND e.seq = r.last_seq WHERE r.status = 'WaitingForInput' " +
      "AND e.type = 'input-requested' AND (e.data->>'idleUntil')::timestamptz < now() LIMIT $1",
    [limit],
  );
  return rows.map((row) => row.id);
}
