// Runs started by another run's tool call (agents as tools, schema 15): finding a call's child, a run's
// descendants, and keeping ancestors' status in step with a descendant waiting for a person.
import type { Queryable } from '../db/db.js';
import { budgetOf, COLUMNS, type RunBudget, type RunRecord, type RunRow, type RunStatus, toRecord } from './runs.js';

/** The child run that the parent's call (model turn `step`, index `index` in it) started, if any. */
export async function findChildRun(
  db: Queryable,
  parentRunId: string,
  step: number,
  index: number,
): Promise<RunRecord | undefined> {
  const { rows } = await db.query<RunRow>(
    `SELECT ${COLUMNS} FROM mt_runs WHERE parent_run_id = $1 AND parent_step = $2 AND parent_call_index = $3`,
    [parentRunId, step, index],
  );
  return rows[0] && toRecord(rows[0]);
}

/** The ids of a run's descendants that have not ended (children, their children...), parents first. */
export async function openDescendants(db: Queryable, runId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    'WITH RECURSIVE down(id, depth) AS (SELECT id, 1 FROM mt_runs WHERE parent_run_id = $1 UNION ALL ' +
      'SELECT c.id, down.depth + 1 FROM mt_runs c JOIN down ON c.parent_run_id = down.id) ' +
      "SELECT down.id FROM down JOIN mt_runs r ON r.id = down.id WHERE r.status IN ('Running', 'PendingApproval', 'PendingAuthorization', 'PendingBudget', 'PendingLimit') " +
      'ORDER BY down.depth',
    [runId],
  );
  return rows.map((row) => row.id);
}

/**
 * The ids of a run's children that have not ended (not their children). Read after the caller locked the run's row
 * (a cancel's `requestCancel`): a child whose creation committed before that lock is among them, and one not yet
 * committed is refused by the lock's holder (its creation is fenced by the parent's `cancel_requested`).
 */
export async function openChildren(db: Queryable, runId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    "SELECT id FROM mt_runs WHERE parent_run_id = $1 AND status IN ('Running', 'PendingApproval', 'PendingAuthorization', 'PendingBudget', 'PendingLimit', 'WaitingForInput') " +
      'ORDER BY created_at, id',
    [runId],
  );
  return rows.map((row) => row.id);
}

/**
 * The key that started a run's tree: the `started_by_key_id` of its top run (null when that run was started without
 * a stored key). Read for a child run stored without one (a child created before schema 19 by an older worker).
 */
export async function treeStartedBy(db: Queryable, runId: string): Promise<string | null> {
  const { rows } = await db.query<{ key: string | null }>(
    'WITH RECURSIVE up(id, parent, key) AS (SELECT id, parent_run_id, started_by_key_id FROM mt_runs WHERE id = $1 ' +
      'UNION ALL SELECT r.id, r.parent_run_id, r.started_by_key_id FROM mt_runs r JOIN up ON r.id = up.parent) ' +
      'SELECT key FROM up WHERE parent IS NULL',
    [runId],
  );
  return rows[0]?.key ?? null;
}

/**
 * Locks run `runId` and its ancestors' rows in `tx`, the top run first (one statement). Every transaction that writes
 * more than one run of a tree takes their locks top down, as a cancel does (the run, then its children): a child's
 * status change, which its ancestors follow, or an answer, which locks its approval after its runs, then never
 * waits in a cycle with a cancel (a deadlock that would fail one of them).
 */
export async function lockRunLine(tx: Queryable, runId: string): Promise<void> {
  await tx.query(
    'WITH RECURSIVE up(id, parent) AS (SELECT id, parent_run_id FROM mt_runs WHERE id = $1 ' +
      'UNION ALL SELECT r.id, r.parent_run_id FROM mt_runs r JOIN up ON r.id = up.parent) ' +
      'SELECT r.id FROM mt_runs r WHERE r.id IN (SELECT id FROM up) ORDER BY r.depth FOR UPDATE OF r',
    [runId],
  );
}

/** The ids of a run and all its descendants. */
export async function runTree(db: Queryable, runId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    'WITH RECURSIVE down(id) AS (SELECT $1::uuid UNION ALL ' +
      'SELECT c.id FROM mt_runs c JOIN down ON c.parent_run_id = down.id) SELECT id FROM down',
    [runId],
  );
  return rows.map((row) => row.id);
}

/**
 * Keeps a run's ancestors in step with it after its status became `status`: a descendant waiting for a person makes
 * its Running ancestors (which wait on it, holding no worker) PendingApproval; any other status makes them Running
 * again, each unless it waits on an approval of its own. Resolves with the run's parent id (null for a top run).
 */
export async function followDescendant(db: Queryable, runId: string, status: RunStatus): Promise<string | null> {
  const waiting = status === 'PendingApproval';
  const { rows } = await db.query<{ parent: string | null }>(
    'WITH RECURSIVE up(id) AS (SELECT parent_run_id FROM mt_runs WHERE id = $1 AND parent_run_id IS NOT NULL ' +
      'UNION ALL SELECT r.parent_run_id FROM mt_runs r JOIN up ON r.id = up.id WHERE r.parent_run_id IS NOT NULL), ' +
      'changed AS (UPDATE mt_runs a SET status = $2, updated_at = now() WHERE a.id IN (SELECT id FROM up) ' +
      'AND a.status = $3 AND ($2 = $4 OR NOT EXISTS (SELECT 1 FROM mt_approvals p ' +
      "WHERE p.run_id = a.id AND p.status = 'Pending')) RETURNING a.id) " +
      'SELECT (SELECT parent_run_id FROM mt_runs WHERE id = $1) AS parent, (SELECT count(*) FROM changed) AS n',
    [runId, waiting ? 'PendingApproval' : 'Running', waiting ? 'Running' : 'PendingApproval', 'PendingApproval'],
  );
  return rows[0]?.parent ?? null;
}

/** A run of a tree as budgets count it: what it spent itself, and its budget. */
export interface TreeSpendRun {
  id: string;
  parentRunId: string | null;
  tokens: number;
  costUsd: number;
  budget: RunBudget | null;
}

/**
 * Every run of `runId`'s tree (from its top run down) with what each spent itself (its usage columns) and its
 * budget: a run's budget covers its own turns and those of the runs below it (docs/runs.md "Usage and budgets").
 */
export async function treeSpend(db: Queryable, runId: string): Promise<TreeSpendRun[]> {
  const { rows } = await db.query<{
    id: string;
    parent_run_id: string | null;
    input_tokens: string;
    output_tokens: string;
    cost_usd: string;
    budget_tokens: string | null;
    budget_cost_usd: string | null;
    budget_on_exceeded: string | null;
  }>(
    'WITH RECURSIVE up(id, parent) AS (SELECT id, parent_run_id FROM mt_runs WHERE id = $1 ' +
      'UNION ALL SELECT r.id, r.parent_run_id FROM mt_runs r JOIN up ON r.id = up.parent), ' +
      'down(id) AS (SELECT id FROM up WHERE parent IS NULL ' +
      'UNION ALL SELECT c.id FROM mt_runs c JOIN down ON c.parent_run_id = down.id) ' +
      'SELECT r.id, r.parent_run_id, r.input_tokens, r.output_tokens, r.cost_usd, r.budget_tokens, ' +
      'r.budget_cost_usd, r.budget_on_exceeded FROM mt_runs r JOIN down ON r.id = down.id',
    [runId],
  );
  return rows.map((row) => ({
    id: row.id,
    parentRunId: row.parent_run_id,
    tokens: Number(row.input_tokens) + Number(row.output_tokens),
    costUsd: Number(row.cost_usd),
    budget: budgetOf(row),
  }));
}
