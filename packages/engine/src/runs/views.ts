import type { ApprovalRecord, RunRecord, RunSummaryRecord } from '@maitento/store';
import type { ApprovalStatus, ApprovalView, RunSummary, RunView, VersionRef } from '../api/types.js';

/** An approval as the API shows it. */
export function approvalView(record: ApprovalRecord): ApprovalView {
  return {
    id: record.id,
    runId: record.runId,
    functionName: record.functionName,
    argumentsJson: record.argumentsJson,
    status: record.status as ApprovalStatus,
    agentName: record.agentName,
    reason: record.reason,
    answeredBy:
      record.answeredByKeyId === null
        ? null
        : { keyId: record.answeredByKeyId, keyName: record.answeredByKeyName ?? '' },
    answeredAt: record.answeredAt,
    expiresAt: record.expiresAt,
    createdAt: record.createdAt,
  };
}

/** A run as the API shows it; `pending` is its Pending approval, shown while it waits. */
export function runView(record: RunRecord, pending?: ApprovalRecord): RunView {
  const status = record.status;
  return {
    id: record.id,
    interaction: { name: record.interaction, version: record.interactionVersion },
    status,
    interactive: record.interactive,
    inputs: record.inputs,
    result: record.result,
    error: record.errorCode === null ? null : { code: record.errorCode, message: record.errorMessage ?? '' },
    pendingApproval: status === 'PendingApproval' && pending !== undefined ? approvalView(pending) : null,
    versions: record.versions as VersionRef[],
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

/** A run as a list shows it: no inputs or versions, the result cut to a summary. */
export function runSummary(record: RunSummaryRecord): RunSummary {
  const status = record.status;
  return {
    id: record.id,
    interaction: { name: record.interaction, version: record.interactionVersion },
    status,
    interactive: record.interactive,
    result: record.resultSummary,
    resultTruncated: record.resultTruncated,
    error: record.errorCode === null ? null : { code: record.errorCode, message: record.errorMessage ?? '' },
    pendingApprovalId: status === 'PendingApproval' ? record.pendingApprovalId : null,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}
