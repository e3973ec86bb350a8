// The one decision "may this approved call go now", for runs and for MCP calls alike (#42): what an approval means
// now (its expiry included), and the last checks right before an approved call is sent.
import type { MtError } from '@maitento/errors';
import type { ApprovalUse } from '@maitento/gateway';
import {
  type ApprovalRecord,
  apiKeyDeleted,
  consumeApproval,
  type KeyRole,
  type Queryable,
  storeErrors,
} from '@maitento/store';
import { engineErrors } from '../errors.js';
import { type CallReads, findVersion } from '../runs/call-reads.js';

/**
 * What an approval means now: still waiting for a person, answered, or expired. An approval expires while it waits
 * (`expires_at` passed, by the database's clock: `ApprovalRecord.expired`); one made outside a run (an MCP call)
 * also expires once approved but not used in time. A run's approved approval does not expire: its run goes on at
 * once. The store applies the same rule in the statements that answer and consume (store/runs/approvals.ts).
 */
export function approvalNow(approval: ApprovalRecord): 'waiting' | 'approved' | 'rejected' | 'expired' {
  if (approval.status === 'Expired') return 'expired';
  if (approval.status === 'Rejected') return 'rejected';
  if (approval.status === 'Pending') return approval.expired ? 'expired' : 'waiting';
  return approval.expired && approval.runId === null ? 'expired' : 'approved';
}

/** What the checks of the moment of acting read: the call's pinned versions and the key whose authority it uses. */
export interface ActingCheck {
  /** The call path's reads (the server's cache, or the engine's own); synced before they are read. */
  reads: CallReads;
  db: Queryable;
  namespace: string;
  /** The key on whose authority the call is made (a run's tree key, an MCP session's key); null: no stored key. */
  keyId: string | null;
  tool: { name: string; version: number };
  connector: { name: string; version: number };
}

/**
 * A refusal when the tool's or its connector's pinned version is disabled (or gone): read through `reads`, which
 * the caller synced for this call.
 */
export async function versionRefusal(
  check: Pick<ActingCheck, 'reads' | 'namespace' | 'tool' | 'connector'>,
): Promise<MtError | undefined> {
  const { reads, namespace, tool, connector } = check;
  const [toolNow, connectorNow] = await Promise.all([
    findVersion(reads, namespace, 'tool', tool.name, tool.version),
    findVersion(reads, namespace, 'connector', connector.name, connector.version),
  ]);
  if (toolNow?.enabled !== true) return storeErrors.create('api:extops:version-disabled', tool);
  if (connectorNow?.enabled !== true) return storeErrors.create('api:connectors:version-disabled', connector);
  return undefined;
}

/**
 * Why a call made without a wait (or a person asked about one) may not be made: a disabled tool or connector version,
 * the deleted key whose authority it uses. Read through `reads`, which the caller synced for this call (the epoch
 * the call's `tool-call-started` read): no round trip while they are kept.
 */
export async function directRefusal(check: ActingCheck): Promise<MtError | undefined> {
  const { keyId } = check;
  const [disabled, keyThere] = await Promise.all([
    versionRefusal(check),
    keyId === null ? true : check.reads.apiKeyExists(check.namespace, keyId),
  ]);
  if (disabled !== undefined) return disabled;
  if (!keyThere) return engineErrors.create('api:calls:key-deleted', { keyId: keyId!, tool: check.tool.name });
  return undefined;
}

/**
 * Why a call made after a wait (an approved call, a call resumed after a crash) may not be made now, read right
 * before sending: a disabled tool or connector version, the deleted key whose authority it uses. The secret is read
 * once, into the call's input built right before sending (a missing one is refused by the gateway's auth step,
 * `api:gateway:secret-not-found`); the approval's hash, use and expiry are checked by the statement that consumes it.
 */
export async function actingRefusal(check: ActingCheck): Promise<MtError | undefined> {
  await check.reads.sync();
  const { keyId } = check;
  const [disabled, keyGone] = await Promise.all([
    versionRefusal(check),
    keyId === null ? false : apiKeyDeleted(check.db, check.namespace, keyId),
  ]);
  if (disabled !== undefined) return disabled;
  if (keyGone) return engineErrors.create('api:calls:key-deleted', { keyId: keyId!, tool: check.tool.name });
  return undefined;
}

/**
 * The gateway's last word on an approved call (`callApproved`): the checks of the moment of acting, then the
 * approval consumed by the one statement that checks it (Approved, the same hash, unused, or used before by this
 * same call with `again`, and for an approval outside a run not expired). `used` is the refusal when another call
 * consumed it first.
 */
export function approvedCallUse(
  check: ActingCheck,
  approval: ApprovalRecord,
  options: { again?: boolean; used: () => MtError },
): ApprovalUse {
  return {
    hash: approval.requestHash,
    consume: async (hash: string) => {
      const refused = await actingRefusal(check);
      if (refused !== undefined) return refused;
      if (await consumeApproval(check.db, approval.id, hash, { again: options.again === true })) return undefined;
      return options.used();
    },
  };
}

/** The key roles that may answer an approval at all (docs/roles.md): every role but `runner`. */
export const ANSWERING_ROLES: readonly KeyRole[] = ['admin', 'user', 'approver'];

/** A refusal when a key of `role` may not answer any approval (`api:approvals:role-forbidden`). */
export function answerRoleRefusal(role: KeyRole): MtError | undefined {
  return ANSWERING_ROLES.includes(role) ? undefined : engineErrors.create('api:approvals:role-forbidden', { role });
}

/**
 * The one decision "may this key answer this approval" (REST, the console, and so MCP's approvals, all answer
 * through `answerApproval`, which asks it): the key's role answers approvals; the policy of the tool version the
 * approval covers (taken when it was made) names the key's role or id among its approvers, does not exclude the key
 * that started the run's tree, and an approval counts each key once. Undefined: it may.
 */
export function answerRefusal(
  approval: ApprovalRecord,
  by: { keyId: string; role: KeyRole },
  decision: 'approve' | 'reject',
): MtError | undefined {
  const byRole = answerRoleRefusal(by.role);
  if (byRole !== undefined) return byRole;
  const policy = approval.policy ?? {};
  const tool = approval.functionName;
  const approvers = policy.approvers ?? [];
  if (approvers.length > 0 && !approvers.includes(by.role) && !approvers.includes(by.keyId)) {
    return engineErrors.create('api:approvals:not-an-approver', {
      tool,
      approvers: approvers.join(', '),
      role: by.role,
      keyId: by.keyId,
    });
  }
  if (policy.excludeStarter === true && approval.startedByKeyId === by.keyId) {
    return engineErrors.create('api:approvals:starter-excluded', { tool, keyId: by.keyId });
  }
  // Counted only while it waits: an approval decided meanwhile is "already answered", whoever asks.
  if (
    decision === 'approve' &&
    approval.status === 'Pending' &&
    approval.approvedBy.some((k) => k.keyId === by.keyId)
  ) {
    return engineErrors.create('api:approvals:same-approver', {
      id: approval.id,
      keyId: by.keyId,
      tool,
      count: String(policy.count ?? 1),
    });
  }
  return undefined;
}
