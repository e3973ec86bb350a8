// The one way a cancel reaches a run tree (agents as tools): the run asked for, then every run below it that has not
// ended, each locked before its children are read. A child's creation appends to its parent fenced by the parent's
// `cancel_requested` and under the parent row's lock (journal.ts, `live`), so a child being created at the moment
// of the cancel is either refused (the cancel committed first) or committed before the cancel reads the children
// (the cancel waited for the lock): no child escapes.
import {
  type ApprovalRecord,
  expireApprovals,
  openChildren,
  type Queryable,
  type RunRecord,
  requestCancel,
  runApprovals,
} from '@maitento/store';
import { runCancelled } from '../journal/events.js';
import { appendToRun } from '../journal/journal.js';

/** Queues a run in the caller's transaction (its worker, or its job, stores the cancellation). */
export interface CancelQueue {
  send(runId: string, tx?: Queryable): Promise<void>;
}

/** The runs a cancel ended at once (waiting ones: no worker holds them), with the approvals it expired. */
export type CancelEnded = Map<string, ApprovalRecord[]>;

/**
 * Expires the Pending approvals of a run that was cancelled: nobody may answer for a run that will not act on the
 * answer (a worker that stored the cancellation of a run with an approval not yet waited on calls it too).
 */
export async function expirePending(tx: Queryable, runId: string): Promise<ApprovalRecord[]> {
  const expired: ApprovalRecord[] = [];
  for (const approval of await runApprovals(tx, runId)) {
    if (approval.status === 'Pending') expired.push(...(await expireApprovals(tx, { id: approval.id })));
  }
  return expired;
}

// Cancels one run in `tx`; resolves with the run as it was, or undefined when it had ended.
async function cancelOne(
  tx: Queryable,
  namespace: string,
  id: string,
  queue: CancelQueue,
  ended: CancelEnded,
): Promise<RunRecord | undefined> {
  const found = await requestCancel(tx, namespace, id);
  if (found === undefined) return undefined;
  if (
    found.status === 'PendingApproval' ||
    found.status === 'PendingAuthorization' ||
    found.status === 'PendingBudget' ||
    found.status === 'PendingLimit' ||
    found.status === 'WaitingForInput'
  ) {
    // No worker holds a waiting run (for a person's answer or message): it is cancelled here, and its pending
    // approval expires.
    const wake = (db: Queryable, parentRunId: string) => queue.send(parentRunId, db);
    const done = await appendToRun(tx, id, [found.status], [runCancelled()], wake);
    if (done !== false) ended.set(id, await expirePending(tx, id));
  } else {
    // requestCancel's statement woke the worker holding the run (`cancel:<id>`); a queued run (or a parent waiting
    // on its child, which holds no worker) is cancelled by its job, like an answer.
    await queue.send(id, tx);
  }
  return found;
}

/**
 * Cancels the runs below `id` that have not ended, top down, in `tx`: each run's row is locked (its cancel
 * requested) before its children are read. Depth is bounded by `MT_RUN_MAX_DEPTH`.
 */
export async function cancelBelow(
  tx: Queryable,
  namespace: string,
  id: string,
  queue: CancelQueue,
  ended: CancelEnded = new Map(),
): Promise<void> {
  for (const child of await openChildren(tx, id)) {
    if ((await cancelOne(tx, namespace, child, queue, ended)) !== undefined) {
      await cancelBelow(tx, namespace, child, queue, ended);
    }
  }
}

/**
 * Cancels run `id` and every run below it that has not ended, in `tx`; resolves with the run as it was, or undefined
 * (nothing done) when it had ended.
 */
export async function cancelTree(
  tx: Queryable,
  namespace: string,
  id: string,
  queue: CancelQueue,
  ended: CancelEnded,
): Promise<RunRecord | undefined> {
  const found = await cancelOne(tx, namespace, id, queue, ended);
  if (found !== undefined) await cancelBelow(tx, namespace, id, queue, ended);
  return found;
}
