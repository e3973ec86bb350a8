import type { ApprovalRecord, RunRecord, RunSummaryRecord } from '@maitento/store';
import type { ApprovalStatus, ApprovalView, RunSummary, RunView, VersionRef } from '../api/types.js';

/** An approval as the API shows it. */
export function approvalView(record: ApprovalRecord): ApprovalView {
  return {
    id: record.id,
    runId: record.runId,
    functionName: record.functionName,
    argumentsJson: record.argumentsJson,
    requestHash: record.requestHash,
    edited: record.editedBy === null ? null : { by: record.editedBy },
    status: record.status as ApprovalStatus,
    agentName: record.agentName,
    reason: record.reason,
    answeredBy:
      record.answeredByKeyId === null
        ? null
        : { keyId: record.answeredByKeyId, keyName: record.answeredByKeyName ?? '' },
    approvedBy: record.approvedBy,
    answeredAt: record.answeredAt,
    expiresAt: record.expiresAt,
    createdAt: record.createdAt,
  };
}

type RunBase = Pick<
  RunView,
  'id' | 'interaction' | 'status' | 'interactive' | 'error' | 'parentRunId' | 'agent' | 'createdAt' | 'updatedAt'
>;

// What a run's full view and its summary in a list both show.
function runBase(record: RunRecord | RunSummaryRecord): RunBase {
  return {
    id: record.id,
    interaction: { name: record.interaction, version: record.interactionVersion },
    status: record.status,
    interactive: record.interactive,
    error: record.errorCode === null ? null : { code: record.errorCode, message: record.errorMessage ?? '' },
    parentRunId: record.parentRunId,
    agent: record.agent,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

/**
 * A run as the API shows it; `pending` is the Pending approval it waits on (its own, or a child run's: then the
 * approval's `runId` is the child's and its `agentName` the agent that asks), shown while it waits.
 */
export function runView(record: RunRecord, pending?: ApprovalRecord): RunView {
  return {
    ...runBase(record),
    inputs: record.inputs,
    result: record.result !== null && record.resultStructured ? JSON.parse(record.result) : record.result,
    pendingApproval: record.status === 'PendingApproval' && pending !== undefined ? approvalView(pending) : null,
    ...(record.endUser === null ? {} : { endUser: record.endUser }),
    ...(record.origin === null ? {} : { origin: record.origin as RunView['origin'] }),
    versions: record.versions as VersionRef[],
    usage: record.usage,
    budget: record.budget,
  };
}

/** A run as a list shows it: no inputs or versions, the result cut to a summary. */
export function runSummary(record: RunSummaryRecord): RunSummary {
  return {
    ...runBase(record),
    result: record.resultSummary,
    resultTruncated: record.resultTruncated,
    pendingApprovalId: record.status === 'PendingApproval' ? record.pendingApprovalId : null,
    usage: record.usage,
  };
}
