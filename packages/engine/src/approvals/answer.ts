import {
  answerApprovalRecord,
  appendRunEvents,
  type ApprovalRecord,
  type Db,
  type Queryable,
  expireApprovals,
  findApproval,
} from '@maitento/store';
import { isUuid } from '@maitento/store';
import type { ApprovalAnswer } from '../api/types.js';
import { engineErrors } from '../errors.js';

/** Reads an approval of the namespace, or throws `api:approvals:not-found`. */
export async function approvalOrThrow(db: Db, namespace: string, id: string): Promise<ApprovalRecord> {
  const found = isUuid(id) ? await findApproval(db, id, namespace) : undefined;
  if (found === undefined) throw engineErrors.create('api:approvals:not-found', { id });
  return found;
}

/** Marks an approval Expired and fails its run (`api:approvals:expired`), in one transaction. */
export async function expireApproval(db: Db, approval: ApprovalRecord): Promise<void> {
  const error = engineErrors.create('api:approvals:expired', { id: approval.id, expiresAt: approval.expiresAt ?? '' });
  await db.transaction(async (tx) => {
    await expireApprovals(tx, { id: approval.id });
    if (approval.runId === null) return;
    await appendRunEvents(
      tx,
      approval.runId,
      { statuses: ['PendingApproval', 'Running'] },
      [{ type: 'run-failed', data: { code: error.code, message: error.message } }],
      { status: 'Failed', error: { code: error.code, message: error.message } },
    );
  });
}

/**
 * Answers an approval once: one conditional UPDATE decides the winner; the winner stores
 * `approval-answered` on the run, sets it Running again and queues it (`queueRun`), in the same transaction.
 * Resolves with the answered approval.
 */
export async function answerApproval(
  db: Db,
  namespace: string,
  id: string,
  answer: ApprovalAnswer,
  queueRun: (tx: Queryable, runId: string) => Promise<void>,
): Promise<ApprovalRecord> {
  const reason = answer.reason?.trim() ?? '';
  if (answer.decision === 'reject' && reason === '') throw engineErrors.create('api:approvals:reason-required');
  const existing = await approvalOrThrow(db, namespace, id);
  const won = await db.transaction(async (tx) => {
    const record = await answerApprovalRecord(tx, namespace, id, {
      status: answer.decision === 'approve' ? 'Approved' : 'Rejected',
      reason: reason === '' ? null : reason,
      keyId: answer.by.keyId,
      keyName: answer.by.keyName,
    });
    if (record === undefined || record.runId === null) return record;
    await appendRunEvents(
      tx,
      record.runId,
      { statuses: ['PendingApproval', 'Running'] },
      [
        {
          type: 'approval-answered',
          data: {
            approvalId: record.id,
            toolCallId: record.toolCallId,
            index: record.callIndex,
            decision: answer.decision,
            reason: record.reason,
            by: { keyId: answer.by.keyId, keyName: answer.by.keyName },
            at: record.answeredAt,
          },
        },
      ],
      { status: 'Running' },
    );
    await queueRun(tx, record.runId);
    return record;
  });
  if (won !== undefined) return won;
  const now = await approvalOrThrow(db, namespace, id);
  if (now.status === 'Pending' && now.expired) {
    await expireApproval(db, now);
    throw engineErrors.create('api:approvals:expired', { id, expiresAt: now.expiresAt ?? '' });
  }
  if (now.status === 'Expired' && existing.status === 'Pending') {
    throw engineErrors.create('api:approvals:expired', { id, expiresAt: now.expiresAt ?? '' });
  }
  throw engineErrors.create('api:approvals:already-answered', { id, status: now.status });
}
