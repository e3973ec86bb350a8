// The wire's plain lists, without TypeBox (./schemas.ts builds its schemas from them and re-exports them): the
// client (`@maitento/sdk/client`) uses them without loading TypeBox's ~370 modules.

/** The four resource kinds of a config repo. */
export const RESOURCE_KINDS = ['connector', 'tool', 'agent', 'interaction'] as const;
/** Run statuses. */
export const RUN_STATUSES = [
  'Running',
  'PendingApproval',
  'WaitingForInput',
  'Completed',
  'Failed',
  'Cancelled',
] as const;
/** Statuses a run does not leave. */
export const TERMINAL_RUN_STATUSES = [
  'Completed',
  'Failed',
  'Cancelled',
] as const satisfies readonly (typeof RUN_STATUSES)[number][];
/**
 * The roles of an API key (docs/roles.md): `admin` changes its namespace; `user` (a person's application) runs and
 * answers its approvals; `runner` (a program, an agent, an MCP host) runs and reads its own runs, never answers an
 * approval; `approver` reads and answers approvals, nothing else.
 */
export const KEY_ROLES = ['admin', 'user', 'runner', 'approver'] as const;
/** Approval statuses. */
export const APPROVAL_STATUSES = ['Pending', 'Approved', 'Rejected', 'Expired'] as const;
/** The kinds of stored steps of a run. */
export const RUN_EVENT_TYPES = [
  'run-started',
  'model-response',
  'tool-call-started',
  'tool-result',
  'approval-requested',
  'approval-answered',
  'run-waiting',
  'result-invalid',
  'input-requested',
  'user-message',
  'history-trimmed',
  'conversation-ended',
  'run-completed',
  'run-failed',
  'run-cancelled',
] as const;
/** Event types after which a run has ended (its event stream ends there). */
export const TERMINAL_EVENT_TYPES = [
  'run-completed',
  'conversation-ended',
  'run-failed',
  'run-cancelled',
] as const satisfies readonly (typeof RUN_EVENT_TYPES)[number][];
