// The engine's public contract: what the server, the CLI (through the SDK) and the tests see of runs,
// their events and approvals. The shapes the wire carries are @maitento/sdk's (declared once, as TypeBox
// schemas, in packages/sdk/src/wire/): the engine answers and takes exactly those types.

import type { Actor } from '@maitento/sdk/wire';
import type { AuditContext, KeyRole } from '@maitento/store';

export type {
  Actor,
  ApprovalStatus,
  ApprovalView,
  ListApprovalsParams as ListApprovalsQuery,
  ListRunsParams as ListRunsQuery,
  RunError,
  RunEvent,
  RunPage,
  RunStatus,
  RunSummary,
  RunView,
  StartRunParams as StartRunInput,
  VersionRef,
} from '@maitento/sdk/wire';
// The engine's own union of event kinds, which the journal checks is the wire's list.
export type { RunEventType } from '../journal/events.js';

/**
 * The console's filters of a runs list beyond the REST API's (decision 0330): a time window on when runs were
 * created (ISO 8601, `since` inclusive, `until` exclusive), text in the run's id, and a failed run's error code.
 */
export interface RunsListFilters {
  since?: string;
  until?: string;
  idContains?: string;
  errorCode?: string;
}

/** Who reads a run: the API key of the request (a secret input is shown to it only when it may use the secret). */
export interface RunViewer {
  keyId: string;
  /** A `runner` key sees only the runs whose tree it started (`startedByKeyId`); others: not found. */
  role?: KeyRole;
}

/** An answer to an approval. */
export interface ApprovalAnswer {
  decision: 'approve' | 'reject';
  /** Required with `reject`. */
  reason?: string;
  /** The answering key, with its role: `answerRefusal` decides whether it may answer. */
  by: Actor & { role: KeyRole };
  /** Who answers, for the audit log: the answer is one `approval.approved` or `approval.rejected` row with it. */
  audit?: AuditContext;
  /**
   * Edit, then approve (decision 0215): the model-settable arguments the call is to be made with instead, and the
   * `requestHash` of the request the person saw (a stale view approves nothing).
   */
  edit?: { arguments: unknown; requestHash?: string };
}
