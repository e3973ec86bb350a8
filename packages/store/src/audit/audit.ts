import type { Queryable } from '../db/db.js';
import { storeErrors } from '../errors.js';
import { iso } from '../internal/rows.js';

/**
 * Who made a change: a key (over the REST API, or a console session signed in with it), a person (a console session
 * signed in through single sign-on; `personId` is `person:<id>`, docs/sso.md), or the system (`mt migrate`,
 * `mt runs-prune`, the retention job, an end user's connect callback).
 */
export type AuditActor =
  | { kind: 'key'; keyId: string; role: string; via: 'api' | 'console' }
  | { kind: 'person'; personId: string; role: string; via: 'console' }
  | { kind: 'system'; via: 'migrate' | 'runs-prune' | 'retention' | 'connect-callback' | 'run' | 'mcp' };

/** Who asks for a change, and the request it came in: what a write path is given to record it. */
export interface AuditContext {
  actor: AuditActor;
  /** The request's id (`X-Request-Id`), or null outside a request. */
  requestId: string | null;
}

/** The actions recorded (docs/audit.md); a dotted name, its first part the kind of thing changed. */
export type AuditAction =
  | 'deploy.applied'
  | 'key.created'
  | 'key.deleted'
  | 'secret.created'
  | 'secret.rotated'
  | 'secret.deleted'
  | 'connection.link-created'
  | 'connection.connected'
  | 'connection.deleted'
  | 'webhook.created'
  | 'webhook.updated'
  | 'webhook.deleted'
  | 'webhook.secret-rotated'
  | 'schedule.paused'
  | 'schedule.resumed'
  | 'resource.deleted'
  | 'version.enabled'
  | 'version.disabled'
  | 'approval.approved'
  | 'approval.rejected'
  | 'approval.edited'
  | 'namespace.created'
  | 'namespace.quotas-set'
  | 'console.signed-in'
  | 'console.signed-out'
  | 'run.cancelled'
  | 'run.budget-extended'
  | 'run.budget-declined'
  | 'runs.pruned'
  | 'approvals.pruned'
  | 'schema.migrated';

/**
 * One row of the audit log, as a write path records it. `before` and `after` summarise the change with names, ids,
 * roles and versions: never a secret's value, a key, or a request body.
 */
export interface AuditEntry extends AuditContext {
  namespace: string;
  action: AuditAction;
  target: { kind: string; id: string };
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
}

/** One row of the audit log as it is read (`GET /v1/audit`). */
export interface AuditRecord {
  /** The row's place in the log: later rows have greater ids. */
  id: string;
  at: string;
  namespace: string;
  actor: { kind: 'key' | 'person' | 'system'; id: string; role: string | null; via: string };
  action: string;
  target: { kind: string; id: string };
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  requestId: string | null;
}

/**
 * Appends one row to the audit log. Called with the transaction of the change it records, so a change never commits
 * without its row and a change that fails leaves none: the one place an audit row is written.
 */
export async function recordAudit(tx: Queryable, entry: AuditEntry): Promise<void> {
  const { actor } = entry;
  await tx.query(
    'INSERT INTO mt_audit (namespace, actor_kind, actor_id, actor_role, via, action, target_kind, target_id, ' +
      'before, after, request_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)',
    [
      entry.namespace,
      actor.kind,
      actor.kind === 'key' ? actor.keyId : actor.kind === 'person' ? actor.personId : 'system',
      actor.kind === 'system' ? null : actor.role,
      actor.via,
      entry.action,
      entry.target.kind,
      entry.target.id,
      entry.before == null ? null : JSON.stringify(entry.before),
      entry.after == null ? null : JSON.stringify(entry.after),
      entry.requestId,
    ],
  );
}

/**
 * `deleteSql` (a `DELETE ... RETURNING` of rows of namespace `$1`) and the system's audit row of it, as one statement:
 * the deletion and its row commit together, with no round trip between them while the deleted rows are locked (the
 * retention's batches, docs/operations.md). Its parameters after the DELETE's own, from `$first`: `via`, `action`, the
 * key of the count in `after`, and `after.endedBefore`; no row is written when nothing was deleted. It returns one
 * row, `rows`: how many the DELETE deleted. The row is {@link recordAudit}'s for `actor: { kind: 'system', via }` and
 * `target: { kind: 'namespace', id: $1 }`.
 */
export function deleteWithSystemAudit(deleteSql: string, first: number): string {
  const [via, action, key, endedBefore] = [first, first + 1, first + 2, first + 3].map((n) => `$${n}`);
  return (
    `WITH deleted AS (${deleteSql}), n AS (SELECT count(*)::int AS rows FROM deleted), ` +
    'audit AS (INSERT INTO mt_audit (namespace, actor_kind, actor_id, actor_role, via, action, target_kind, target_id, ' +
    `before, after, request_id) SELECT $1, 'system', 'system', NULL, ${via}::text, ${action}::text, 'namespace', $1, ` +
    `NULL, jsonb_build_object(${key}::text, n.rows, 'endedBefore', ${endedBefore}::text), NULL FROM n WHERE n.rows > 0) ` +
    'SELECT rows FROM n'
  );
}

/** What {@link listAudit} reads. */
export interface AuditQuery {
  /** A key id, or `system`. */
  actor?: string;
  /** An action or the start of one (`secret.` or `secret`: every secret action). */
  action?: string;
  /** A target: its id (or name), or `kind:id`. */
  target?: string;
  /** ISO 8601 times (the route's schema checks them): rows at or after `since`, before `until`. */
  since?: string;
  until?: string;
  limit?: number;
  cursor?: string;
}

/** One page of the audit log, newest first; `nextCursor` is null on the last one. */
export interface AuditPage {
  entries: AuditRecord[];
  nextCursor: string | null;
}

interface AuditRow {
  seq: string;
  at: Date;
  namespace: string;
  actor_kind: 'key' | 'person' | 'system';
  actor_id: string;
  actor_role: string | null;
  via: string;
  action: string;
  target_kind: string;
  target_id: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  request_id: string | null;
}

function record(row: AuditRow): AuditRecord {
  return {
    id: String(row.seq),
    at: iso(row.at),
    namespace: row.namespace,
    actor: { kind: row.actor_kind, id: row.actor_id, role: row.actor_role, via: row.via },
    action: row.action,
    target: { kind: row.target_kind, id: row.target_id },
    before: row.before,
    after: row.after,
    requestId: row.request_id,
  };
}

/** The default and largest page of {@link listAudit}. */
export const AUDIT_PAGE = 100;
export const AUDIT_MAX_PAGE = 1000;

function decodeCursor(cursor: string): string {
  try {
    const { before } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { before?: unknown };
    if (typeof before === 'string' && /^[1-9]\d{0,18}$/.test(before)) return before;
  } catch {
    // falls through
  }
  throw storeErrors.create('api:audit:cursor-invalid', { cursor });
}

function time(value: string, name: string): Date {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw storeErrors.create('api:audit:time-invalid', { name, value });
  return date;
}

/** One page of the audit log of `namespace`, newest first, filtered by `query`. */
export async function listAudit(db: Queryable, namespace: string, query: AuditQuery = {}): Promise<AuditPage> {
  const limit = Math.min(Math.max(Math.floor(query.limit ?? AUDIT_PAGE), 1), AUDIT_MAX_PAGE);
  const where = ['namespace = $1'];
  const params: unknown[] = [namespace];
  const add = (condition: string, value: unknown) => {
    params.push(value);
    where.push(condition.replaceAll('?', `$${params.length}`));
  };
  if (query.cursor !== undefined) add('seq < ?::bigint', decodeCursor(query.cursor));
  if (query.actor !== undefined) add('actor_id = ?', query.actor);
  if (query.action !== undefined) {
    const prefix = query.action.endsWith('.') ? query.action : `${query.action}.`;
    params.push(query.action);
    params.push(`${prefix.replace(/[\\%_]/g, '\\$&')}%`);
    where.push(`(action = $${params.length - 1} OR action LIKE $${params.length})`);
  }
  if (query.target !== undefined) {
    const colon = query.target.indexOf(':');
    if (colon > 0) {
      add('target_kind = ?', query.target.slice(0, colon));
      add('target_id = ?', query.target.slice(colon + 1));
    } else {
      add('target_id = ?', query.target);
    }
  }
  if (query.since !== undefined) add('at >= ?', time(query.since, 'since'));
  if (query.until !== undefined) add('at < ?', time(query.until, 'until'));
  params.push(limit + 1);
  const { rows } = await db.query<AuditRow>(
    `SELECT * FROM mt_audit WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT $${params.length}`,
    params,
  );
  const page = rows.slice(0, limit).map(record);
  const last = page.at(-1);
  return {
    entries: page,
    nextCursor:
      rows.length > limit && last ? Buffer.from(JSON.stringify({ before: last.id })).toString('base64url') : null,
  };
}

// Audit rows older than the audit retention, across namespaces, a batch at a time.
export const PRUNE_AUDIT =
  'DELETE FROM mt_audit WHERE seq IN (SELECT seq FROM mt_audit WHERE at < $1 ORDER BY seq LIMIT $2) RETURNING 1';
