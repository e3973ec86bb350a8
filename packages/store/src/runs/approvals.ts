import type { Queryable } from '../db/db.js';
import { iso } from '../internal/rows.js';
import { WAKE_CHANNEL } from '../wake/notify.js';
import { outboxCte, outboxWoken } from '../webhooks/webhooks.js';

/** An approval as stored in `mt_approvals`. */
export interface ApprovalRecord {
  id: string;
  namespace: string;
  runId: string | null;
  /** The model's id of the call (shown, never used to find the approval); for an MCP call, its call key. */
  toolCallId: string;
  step: number | null;
  /** The call's index within its model turn: with the run and `step`, the call's identity. */
  callIndex: number | null;
  functionName: string;
  agentName: string | null;
  argumentsJson: string;
  requestHash: string;
  status: string;
  reason: string | null;
  answeredByKeyId: string | null;
  answeredByKeyName: string | null;
  answeredAt: string | null;
  expiresAt: string | null;
  /** When the call it covers consumed it (null: unused). */
  usedAt: string | null;
  /** True when `expiresAt` has passed (by the database's clock). */
  expired: boolean;
  createdAt: string;
  /** The approval policy of the tool version it covers, as it was when the approval was made (null: none). */
  policy: ApprovalPolicy | null;
  /** The key that started its run's tree (an MCP call: the session's key); null when none was stored. */
  startedByKeyId: string | null;
  /** The distinct keys that approved it so far, in order. */
  approvedBy: { keyId: string; keyName: string }[];
  /** The model-settable arguments a person set by editing (the call is made with them); null: the model's own. */
  editedArguments: unknown;
  /** The key that last edited the arguments; null when nobody did. */
  editedBy: { keyId: string; keyName: string } | null;
}

/** A tool's approval policy (`approval.*` in its `.mtr` file; docs/roles.md). */
export interface ApprovalPolicy {
  /** Who may answer: key roles, API key ids and/or people (`person:<id>`); absent or empty: every role that answers. */
  approvers?: string[];
  /** How many distinct keys must approve (default 1). */
  count?: number;
  /** true: the key that started the run's tree may not answer. */
  excludeStarter?: boolean;
}

// Whether an approval's expiry has passed, by the database's clock: the one expression every statement below uses
// (what it means for each status is decided in one place too: the engine's `approvalNow`).
const EXPIRED = '(expires_at IS NOT NULL AND expires_at <= now())';

const COLUMNS =
  'id, namespace, run_id, tool_call_id, step, call_index, function_name, agent_name, arguments_json, request_hash, ' +
  'status, reason, answered_by_key_id, answered_by_key_name, answered_at, expires_at, used_at, created_at, ' +
  `policy, started_by_key_id, approved_by, edited_arguments, edited_by, ${EXPIRED} AS expired`;

// The webhooks' outbox (docs/notifications.md) of a statement whose CTE `source` returned approval rows: one event of
// `type` (an SQL expression, NULL: none) per row, written in the same statement; select {@link HOOKED} with them.
const hooked = (source: string, type: string) =>
  outboxCte('hooked', source, {
    namespace: 'namespace',
    type,
    data:
      "json_build_object('approvalId', id, 'runId', run_id, 'namespace', namespace, 'functionName', function_name, " +
      "'agentName', agent_name, 'status', status, 'expiresAt', expires_at, 'answeredBy', CASE WHEN " +
      "answered_by_key_id IS NULL THEN NULL ELSE json_build_object('keyId', answered_by_key_id, 'keyName', " +
      "answered_by_key_name) END, 'reason', reason)",
  });
const HOOKED = outboxWoken('hooked');
// Selects the changed rows of a CTE and wakes `approval:<id>` for each at commit (and the delivery loop, when the
// outbox CTE `hooked` wrote a delivery).
const WOKEN_HOOKED = `SELECT *, pg_notify('${WAKE_CHANNEL}', 'approval:' || id::text) AS woken, ${HOOKED} FROM`;

interface ApprovalRow {
  id: string;
  namespace: string;
  run_id: string | null;
  tool_call_id: string;
  step: number | null;
  call_index: number | null;
  function_name: string;
  agent_name: string | null;
  arguments_json: string;
  request_hash: string;
  status: string;
  reason: string | null;
  answered_by_key_id: string | null;
  answered_by_key_name: string | null;
  answered_at: Date | null;
  expires_at: Date | null;
  used_at: Date | null;
  expired: boolean;
  created_at: Date;
  policy: ApprovalPolicy | null;
  started_by_key_id: string | null;
  approved_by: { keyId: string; keyName: string }[];
  edited_arguments: unknown;
  edited_by: { keyId: string; keyName: string } | null;
}

function toRecord(row: ApprovalRow): ApprovalRecord {
  return {
    id: row.id,
    namespace: row.namespace,
    runId: row.run_id,
    toolCallId: row.tool_call_id,
    step: row.step,
    callIndex: row.call_index,
    functionName: row.function_name,
    agentName: row.agent_name,
    argumentsJson: row.arguments_json,
    requestHash: row.request_hash,
    status: row.status,
    reason: row.reason,
    answeredByKeyId: row.answered_by_key_id,
    answeredByKeyName: row.answered_by_key_name,
    answeredAt: row.answered_at === null ? null : iso(row.answered_at),
    expiresAt: row.expires_at === null ? null : iso(row.expires_at),
    usedAt: row.used_at === null ? null : iso(row.used_at),
    expired: row.expired,
    createdAt: iso(row.created_at),
    policy: row.policy,
    startedByKeyId: row.started_by_key_id,
    approvedBy: row.approved_by,
    editedArguments: row.edited_arguments ?? null,
    editedBy: row.edited_by ?? null,
  };
}

/** Stores a Pending approval; `ttlSeconds` sets its expiry. Resolves with it as stored. */
export async function insertApproval(
  db: Queryable,
  approval: {
    id: string;
    namespace: string;
    runId: string | null;
    toolCallId: string;
    step?: number;
    callIndex?: number;
    functionName: string;
    agentName?: string;
    argumentsJson: string;
    requestHash: string;
    ttlSeconds?: number;
    policy?: ApprovalPolicy | null;
    startedByKeyId?: string | null;
  },
): Promise<ApprovalRecord> {
  const { rows } = await db.query<ApprovalRow>(
    'WITH made AS (INSERT INTO mt_approvals (id, namespace, run_id, tool_call_id, step, function_name, agent_name, arguments_json, ' +
      "request_hash, status, expires_at, call_index, policy, started_by_key_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'Pending', " +
      'CASE WHEN $10::float8 IS NULL THEN NULL ELSE now() + make_interval(secs => $10::float8) END, $11, $12, $13) ' +
      `RETURNING ${COLUMNS}), ${hooked('made', "'approval.requested'")} SELECT *, ${HOOKED} FROM made`,
    [
      approval.id,
      approval.namespace,
      approval.runId,
      approval.toolCallId,
      approval.step ?? null,
      approval.functionName,
      approval.agentName ?? null,
      approval.argumentsJson,
      approval.requestHash,
      approval.ttlSeconds ?? null,
      approval.callIndex ?? null,
      approval.policy ?? null,
      approval.startedByKeyId ?? null,
    ],
  );
  return toRecord(rows[0]!);
}

/** Reads one approval of a namespace (any namespace when `namespace` is undefined). */
export async function findApproval(db: Queryable, id: string, namespace?: string): Promise<ApprovalRecord | undefined> {
  const { rows } = await db.query<ApprovalRow>(
    `SELECT ${COLUMNS} FROM mt_approvals WHERE id = $1 AND ($2::text IS NULL OR namespace = $2)`,
    [id, namespace ?? null],
  );
  return rows[0] && toRecord(rows[0]);
}

/** The approvals of a run, oldest first. */
export async function runApprovals(db: Queryable, runId: string): Promise<ApprovalRecord[]> {
  const { rows } = await db.query<ApprovalRow>(
    `SELECT ${COLUMNS} FROM mt_approvals WHERE run_id = $1 ORDER BY created_at, id`,
    [runId],
  );
  return rows.map(toRecord);
}

/** The approvals of a run and of its descendants (the child runs its calls started, schema 15), oldest first. */
export async function treeApprovals(db: Queryable, runId: string): Promise<ApprovalRecord[]> {
  const { rows } = await db.query<ApprovalRow>(
    'WITH RECURSIVE down(id) AS (SELECT $1::uuid UNION ALL SELECT c.id FROM mt_runs c JOIN down ON c.parent_run_id = down.id) ' +
      `SELECT ${COLUMNS} FROM mt_approvals WHERE run_id IN (SELECT id FROM down) ORDER BY created_at, id`,
    [runId],
  );
  return rows.map(toRecord);
}

/**
 * The approvals of a namespace, newest first, filtered by status (all when undefined), run, and the key that started
 * their run's tree (a runner key's own).
 */
export async function listApprovalRecords(
  db: Queryable,
  namespace: string,
  filter: { status?: string; runId?: string; limit: number; startedByKeyId?: string },
): Promise<ApprovalRecord[]> {
  const { rows } = await db.query<ApprovalRow>(
    `SELECT ${COLUMNS} FROM mt_approvals WHERE namespace = $1 AND ($2::text IS NULL OR status = $2) ` +
      'AND ($3::uuid IS NULL OR run_id = $3::uuid) AND ($5::text IS NULL OR started_by_key_id = $5) ' +
      'ORDER BY created_at DESC, id DESC LIMIT $4',
    [namespace, filter.status ?? null, filter.runId ?? null, filter.limit, filter.startedByKeyId ?? null],
  );
  return rows.map(toRecord);
}

/**
 * Answers a Pending, unexpired approval: one conditional UPDATE, so of concurrent answers exactly one decides it
 * (and wakes `approval:<id>` at commit). A rejection decides at once. An approval adds the key to `approved_by`
 * unless it is there already, and decides (Approved) once `needed` distinct keys did: under the row's lock, so two
 * approvers at once count as two. Resolves with the approval (still Pending after an approval that did not reach
 * `needed`), or undefined when nothing changed (answered, expired, or this key approved it before).
 */
export async function answerApprovalRecord(
  db: Queryable,
  namespace: string,
  id: string,
  answer: { status: 'Approved' | 'Rejected'; reason: string | null; keyId: string; keyName: string; needed?: number },
): Promise<ApprovalRecord | undefined> {
  const by = JSON.stringify([{ keyId: answer.keyId, keyName: answer.keyName }]);
  // Approved when this approval is the `needed`th distinct one (a rejection: at once).
  const decides = "($3 = 'Rejected' OR jsonb_array_length(approved_by) + 1 >= $8::int)";
  const { rows } = await db.query<ApprovalRow>(
    `WITH answered AS (UPDATE mt_approvals SET status = CASE WHEN ${decides} THEN $3 ELSE status END, ` +
      `reason = CASE WHEN ${decides} THEN $4 ELSE reason END, ` +
      `answered_by_key_id = CASE WHEN ${decides} THEN $5 ELSE answered_by_key_id END, ` +
      `answered_by_key_name = CASE WHEN ${decides} THEN $6 ELSE answered_by_key_name END, ` +
      `answered_at = CASE WHEN ${decides} THEN now() ELSE answered_at END, ` +
      "approved_by = CASE WHEN $3 = 'Approved' THEN approved_by || $7::jsonb ELSE approved_by END " +
      "WHERE id = $1 AND namespace = $2 AND status = 'Pending' " +
      `AND NOT ${EXPIRED} AND NOT ($3 = 'Approved' AND approved_by @> jsonb_build_array(jsonb_build_object('keyId', $5::text))) ` +
      `RETURNING ${COLUMNS}), ${hooked('answered', "CASE WHEN status <> 'Pending' THEN 'approval.answered' END")} ` +
      `${WOKEN_HOOKED} answered`,
    [id, namespace, answer.status, answer.reason, answer.keyId, answer.keyName, by, answer.needed ?? 1],
  );
  return rows[0] && toRecord(rows[0]);
}

/**
 * Edits a Pending, unexpired approval whose request is still `fromHash` (the one the person saw): the call it covers
 * becomes `edited` (its model-settable arguments, the shown arguments and the new hash), and the approvals given to
 * the old request are dropped (decision 0215). One conditional UPDATE; undefined when nothing changed.
 */
export async function editApprovalRecord(
  db: Queryable,
  namespace: string,
  id: string,
  edit: {
    fromHash: string;
    arguments: unknown;
    argumentsJson: string;
    requestHash: string;
    by: { keyId: string; keyName: string };
  },
): Promise<ApprovalRecord | undefined> {
  const { rows } = await db.query<ApprovalRow>(
    'UPDATE mt_approvals SET edited_arguments = $4::jsonb, arguments_json = $5, request_hash = $6, ' +
      "edited_by = $7::jsonb, approved_by = '[]'::jsonb WHERE id = $1 AND namespace = $2 AND status = 'Pending' " +
      `AND request_hash = $3 AND NOT ${EXPIRED} RETURNING ${COLUMNS}`,
    [
      id,
      namespace,
      edit.fromHash,
      JSON.stringify(edit.arguments),
      edit.argumentsJson,
      edit.requestHash,
      JSON.stringify(edit.by),
    ],
  );
  return rows[0] && toRecord(rows[0]);
}

/** Marks Pending approvals Expired: the one given, or every one whose expiry passed; wakes each. Resolves with them. */
export async function expireApprovals(db: Queryable, only?: { id: string }): Promise<ApprovalRecord[]> {
  const { rows } = await db.query<ApprovalRow>(
    "WITH expired AS (UPDATE mt_approvals SET status = 'Expired' WHERE status = 'Pending' AND " +
      `(CASE WHEN $1::uuid IS NULL THEN ${EXPIRED} ELSE id = $1::uuid END) RETURNING ${COLUMNS}), ` +
      `${hooked('expired', "'approval.expired'")} ${WOKEN_HOOKED} expired`,
    [only?.id ?? null],
  );
  return rows.map(toRecord);
}

/**
 * The newest approval made outside a run (run_id NULL) for one tool and one call key that no call has used yet:
 * Pending or answered. Undefined when there is none.
 */
export async function findUnusedCallApproval(
  db: Queryable,
  namespace: string,
  functionName: string,
  callKey: string,
): Promise<ApprovalRecord | undefined> {
  const { rows } = await db.query<ApprovalRow>(
    `SELECT ${COLUMNS} FROM mt_approvals WHERE namespace = $1 AND run_id IS NULL AND function_name = $2 ` +
      'AND tool_call_id = $3 AND used_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 1',
    [namespace, functionName, callKey],
  );
  return rows[0] && toRecord(rows[0]);
}

/**
 * Consumes an Approved approval for a request of `requestHash`, in the one statement that checks it: Approved,
 * the same hash, unused (or, with `again`, used before by this same call, which is being retried with its
 * idempotency key) and, for an approval made outside a run, not expired. Of concurrent consumers exactly one
 * gets true.
 */
export async function consumeApproval(
  db: Queryable,
  id: string,
  requestHash: string,
  options: { again?: boolean } = {},
): Promise<boolean> {
  const { rows } = await db.query(
    "UPDATE mt_approvals SET used_at = COALESCE(used_at, now()) WHERE id = $1 AND status = 'Approved' " +
      'AND request_hash = $2 AND (used_at IS NULL OR $3::boolean) ' +
      `AND (run_id IS NOT NULL OR NOT ${EXPIRED}) RETURNING id`,
    [id, requestHash, options.again === true],
  );
  return rows.length === 1;
}

/**
 * Marks an answered approval as delivered without a call (a rejection or an expiry told to its caller), once: of
 * concurrent callers exactly one gets true.
 */
export async function markApprovalDelivered(db: Queryable, id: string): Promise<boolean> {
  const { rows } = await db.query(
    "UPDATE mt_approvals SET used_at = now() WHERE id = $1 AND status <> 'Pending' AND used_at IS NULL RETURNING id",
    [id],
  );
  return rows.length === 1;
}
