import {
  answerApprovalRecord,
  editApprovalRecord,
  type ApprovalRecord,
  type AuditContext,
  type AuditEntry,
  type Db,
  type Queryable,
  expireApprovals,
  findApproval,
  findRun,
  lockRunLine,
  recordAudit,
} from '@maitento/store';
import { bindIdempotentEffect, type IdempotentEffect, isUuid } from '@maitento/store';
import type { ApprovalAnswer } from '../api/types.js';
import { engineErrors } from '../errors.js';
import { answerRefusal, approvalNow } from './acting.js';
import type { PreparedEdit } from './edit.js';
import { approvalAnswered, runFailed } from '../journal/events.js';
import { appendToRun } from '../journal/journal.js';

/** Reads an approval of the namespace, or throws `api:approvals:not-found`. */
export async function approvalOrThrow(db: Db, namespace: string, id: string): Promise<ApprovalRecord> {
  const found = isUuid(id) ? await findApproval(db, id, namespace) : undefined;
  if (found === undefined) throw engineErrors.create('api:approvals:not-found', { id });
  return found;
}

/** Fails the run of an expired approval (`api:approvals:expired`), if it has one and has not ended. */
export async function failExpired(
  db: Queryable,
  approval: ApprovalRecord,
  /** Queues the parent of a child run that failed so (agents as tools). */
  wakeParent?: (db: Queryable, parentRunId: string) => Promise<void>,
): Promise<boolean> {
  if (approval.runId === null) return false;
  const error = engineErrors.create('api:approvals:expired', { id: approval.id, expiresAt: approval.expiresAt ?? '' });
  return (
    (await appendToRun(db, approval.runId, ['PendingApproval', 'Running'], [runFailed(error)], wakeParent)) !== false
  );
}

/** Marks an approval Expired and fails its run (`api:approvals:expired`), in one transaction. */
export async function expireApproval(
  db: Db,
  approval: ApprovalRecord,
  wakeParent?: (db: Queryable, parentRunId: string) => Promise<void>,
): Promise<void> {
  await db.transaction(async (tx) => {
    // The run's locks before its approval's, as a cancel takes them (lockRunLine).
    if (approval.runId !== null) await lockRunLine(tx, approval.runId);
    await expireApprovals(tx, { id: approval.id });
    await failExpired(tx, approval, wakeParent);
  });
}

/**
 * Answers an approval once: one conditional UPDATE decides the winner; the winner stores
 * `approval-answered` on the run, sets it Running again and queues it (`queueRun`), in the same transaction, with
 * `effect` bound to the request's Idempotency-Key (when it holds one). Resolves with the answered approval.
 */
export async function answerApproval(
  db: Db,
  namespace: string,
  id: string,
  answer: ApprovalAnswer,
  queueRun: (tx: Queryable, runId: string) => Promise<void>,
  effect: IdempotentEffect = { kind: 'approval', id, status: 200 },
  /** Prepares an edited call (`answer.edit`); without it an edit is refused. */
  prepareEdit?: (approval: ApprovalRecord, args: unknown) => Promise<PreparedEdit>,
): Promise<ApprovalRecord> {
  const reason = answer.reason?.trim() ?? '';
  if (answer.decision === 'reject' && reason === '') throw engineErrors.create('api:approvals:reason-required');
  const asked = await approvalOrThrow(db, namespace, id);
  const refused = answerRefusal(asked, answer.by, answer.decision);
  if (refused !== undefined) throw refused;
  const edit = await editOf(asked, answer, prepareEdit);
  let runEnded = false;
  const won = await db
    .transaction(async (tx) => {
      // The run's locks (and its ancestors', top down) before the approval's, as a cancel takes them (lockRunLine).
      if (asked.runId !== null) await lockRunLine(tx, asked.runId);
      if (edit !== undefined) {
        // The edited request replaces the one shown, only while it is still the one the person saw.
        const edited = await editApprovalRecord(tx, namespace, id, { ...edit, by: answer.by });
        if (edited === undefined) return undefined;
        if (answer.audit) await recordAudit(tx, editAudit(asked, edited, answer.audit));
      }
      const record = await answerApprovalRecord(tx, namespace, id, {
        status: answer.decision === 'approve' ? 'Approved' : 'Rejected',
        reason: reason === '' ? null : reason,
        keyId: answer.by.keyId,
        keyName: answer.by.keyName,
        needed: asked.policy?.count ?? 1,
      });
      if (record !== undefined && answer.audit) await recordAudit(tx, answerAudit(record, answer.audit, reason));
      if (record === undefined) return record;
      // Outside a run, or an approval short of its policy's count (recorded; the run waits on for the next approver):
      // a keyed request's answer commits with its Idempotency-Key's record (decision 0102).
      if (record.runId === null || record.status === 'Pending') {
        await bindIdempotentEffect(tx, effect);
        return record;
      }
      // A run that also waits for an end user to connect (PendingAuthorization) takes the answer too: it goes on,
      // and asks for the connection again.
      const seq = await appendToRun(
        tx,
        record.runId,
        ['PendingApproval', 'PendingAuthorization', 'Running'],
        [approvalAnswered(record, answer)],
      );
      if (seq === false) {
        // Its run ended (a cancel stored just before its approval was expired): nothing answered.
        runEnded = true;
        throw new Error('run ended');
      }
      await queueRun(tx, record.runId);
      await bindIdempotentEffect(tx, effect);
      return record;
    })
    .catch((error: unknown) => {
      if (runEnded) return undefined;
      throw error;
    });
  if (won !== undefined) return won;
  if (runEnded) {
    const now = await approvalOrThrow(db, namespace, id);
    if (now.status === 'Pending') await expireApprovals(db, { id });
  }
  const now = await approvalOrThrow(db, namespace, id);
  if (edit !== undefined && now.status === 'Pending' && approvalNow(now) !== 'expired') {
    if (now.requestHash !== edit.fromHash) {
      throw engineErrors.create('api:approvals:edit-stale', { id, seen: edit.fromHash });
    }
  }
  if (now.status === 'Pending' && approvalNow(now) !== 'expired') {
    // Still waiting: this key approved it in the meantime (a two-person rule counts each key once).
    const again = answerRefusal(now, answer.by, answer.decision);
    if (again !== undefined) throw again;
  }
  if (now.status === 'Pending' && approvalNow(now) === 'expired') {
    await expireApproval(db, now, queueRun);
    throw engineErrors.create('api:approvals:expired', { id, expiresAt: now.expiresAt ?? '' });
  }
  if (now.status === 'Expired') {
    // Never answered: it timed out (api:approvals:expired), or its run ended first (cancelled, failed) and
    // took it along. Only an approval a person answered "has already been answered".
    if (now.expired) {
      throw engineErrors.create('api:approvals:expired', { id, expiresAt: now.expiresAt ?? '' });
    }
    const run = now.runId === null ? undefined : await findRun(db, now.runId, namespace);
    throw engineErrors.create('api:approvals:closed', {
      id,
      why: run === undefined ? '' : `: its run ${run.id} ended first (${run.status})`,
    });
  }
  throw engineErrors.create('api:approvals:already-answered', { id, status: now.status });
}

/**
 * The edit an answer asks for, checked and prepared (decision 0215): undefined without one, and for an edit that
 * changes nothing (the same request hash: a plain approval). Only a pending approval is edited; one answered or
 * expired meanwhile is left to the answer's own refusals.
 */
async function editOf(
  asked: ApprovalRecord,
  answer: ApprovalAnswer,
  prepareEdit: ((approval: ApprovalRecord, args: unknown) => Promise<PreparedEdit>) | undefined,
): Promise<{ fromHash: string; arguments: unknown; argumentsJson: string; requestHash: string } | undefined> {
  if (answer.edit === undefined || answer.decision !== 'approve') return undefined;
  const seen = answer.edit.requestHash;
  if (seen === undefined || seen === '')
    throw engineErrors.create('api:approvals:edit-hash-required', { id: asked.id });
  if (asked.status !== 'Pending' || approvalNow(asked) === 'expired') return undefined;
  if (asked.runId === null || prepareEdit === undefined) {
    throw engineErrors.create('api:approvals:edit-outside-run', { id: asked.id });
  }
  if (asked.requestHash !== seen) throw engineErrors.create('api:approvals:edit-stale', { id: asked.id, seen });
  const prepared = await prepareEdit(asked, answer.edit.arguments);
  if (prepared.requestHash === asked.requestHash) return undefined;
  return { fromHash: seen, arguments: answer.edit.arguments, ...prepared };
}

/** The audit row of an edit: the call's arguments before and after (as shown: run inputs, never a secret). */
function editAudit(before: ApprovalRecord, after: ApprovalRecord, audit: AuditContext): AuditEntry {
  return {
    ...audit,
    namespace: after.namespace,
    action: 'approval.edited',
    target: { kind: 'approval', id: after.id },
    before: { argumentsJson: before.argumentsJson, requestHash: before.requestHash },
    after: {
      tool: after.functionName,
      runId: after.runId,
      argumentsJson: after.argumentsJson,
      requestHash: after.requestHash,
      // A two-person policy counts again from this edit: the approvals of the old request are dropped.
      approvalsDropped: before.approvedBy.length,
    },
  };
}

/** The audit row of an answered approval: which call (tool, run) and the answer, never its arguments. */
function answerAudit(record: ApprovalRecord, audit: AuditContext, reason: string): AuditEntry {
  return {
    ...audit,
    namespace: record.namespace,
    action: record.status === 'Approved' ? 'approval.approved' : 'approval.rejected',
    target: { kind: 'approval', id: record.id },
    before: { status: 'Pending' },
    after: {
      status: record.status,
      tool: record.functionName,
      runId: record.runId,
      requestHash: record.requestHash,
      ...(reason === '' ? {} : { reason }),
    },
  };
}
