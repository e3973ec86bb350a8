// The wire's plain lists, without TypeBox (./schemas.ts builds its schemas from them and re-exports them): the
// client (`@maitento/sdk/client`) uses them without loading TypeBox's ~370 modules.

/** The resource kinds of a config repo. */
export const RESOURCE_KINDS = [
  'auth-provider',
  'connector',
  'tool',
  'agent',
  'interaction',
  'schedule',
  'trigger',
] as const;
/** How an inbound webhook is verified: Standard Webhooks, GitHub's `X-Hub-Signature-256`, Stripe's `Stripe-Signature`. */
export const TRIGGER_VERIFY_STYLES = ['standard-webhooks', 'github', 'stripe'] as const;
/** The ends of a run a chaining trigger (`on = { runCompleted = ... }`) may start on: Completed by default. */
export const TRIGGER_RUN_STATUSES = ['Completed', 'Failed'] as const;
/** What a schedule does with a tick while its previous run has not ended: skip it, hold one, or start it anyway. */
export const SCHEDULE_OVERLAPS = ['skip', 'queue-one', 'allow'] as const;
/** What a schedule does with the ticks no process was up for: record them as missed, or start one run for them. */
export const SCHEDULE_MISSED = ['skip', 'run-once'] as const;
/** What became of one tick of a schedule. */
export const SCHEDULE_TICK_STATUSES = ['started', 'queued', 'skipped', 'missed', 'failed'] as const;
/** The token endpoint client authentication methods an auth provider may use (RFC 6749 2.3, OIDC Core 9). */
/**
 * How a tool limit's window is written: a whole number of seconds, minutes or hours ("5s", "1m", "1h"), 1 s to 24 h.
 * Returns the window in milliseconds, or undefined when `per` is not one.
 */
export function limitWindowMs(per: string): number | undefined {
  const m = /^([1-9][0-9]{0,5})(s|m|h)$/.exec(per);
  if (m === null) return undefined;
  const ms = Number(m[1]) * (m[2] === 's' ? 1000 : m[2] === 'm' ? 60_000 : 3_600_000);
  return ms <= 86_400_000 ? ms : undefined;
}

export const TOKEN_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'] as const;
/** Connection statuses: Active (its tokens work or refresh), NeedsReauthorization (the provider refused its refresh). */
export const CONNECTION_STATUSES = ['Active', 'NeedsReauthorization'] as const;
/** Run statuses. */
export const RUN_STATUSES = [
  'Running',
  'PendingApproval',
  'PendingAuthorization',
  'PendingBudget',
  'PendingLimit',
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
/**
 * The event types of outbound webhooks (docs/notifications.md); `webhook.test` is only ever sent by the "send a test
 * event" action, to the one endpoint it names.
 */
export const WEBHOOK_EVENT_TYPES = [
  'approval.requested',
  'approval.answered',
  'approval.expired',
  'run.waiting',
  'run.completed',
  'run.failed',
  'authorization.requested',
  'webhook.test',
] as const;
/** The statuses of one webhook delivery. */
export const WEBHOOK_DELIVERY_STATUSES = ['Pending', 'Delivered', 'Failed'] as const;
/** The kinds of stored steps of a run. */
export const RUN_EVENT_TYPES = [
  'run-started',
  'model-response',
  'tool-call-started',
  'tool-result',
  'approval-requested',
  'approval-answered',
  'run-waiting',
  'authorization-requested',
  'authorization-completed',
  'result-invalid',
  'input-requested',
  'user-message',
  'budget-exceeded',
  'budget-extended',
  'limit-waiting',
  'limit-wait-over',
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
