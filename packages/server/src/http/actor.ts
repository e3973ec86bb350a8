import type { AuditContext, KeyRole, Queryable } from '@maitento/store';
import type { FastifyRequest } from 'fastify';
import { serverErrors } from '../errors.js';

/** The API key a request was made with, as an approval or a run records it. */
export interface RequestActor {
  keyId: string;
  keyName: string;
  /** The key's role: the engine's `answerRefusal` decides with it whether the key may answer an approval. */
  role: KeyRole;
}

/** What an actor's name is when its key was created without one. */
export const UNNAMED_KEY = '(unnamed key)';

/**
 * The key behind `request`, with its name read from the store (the auth hook only knows its id).
 * A platform token (a tool call of an agent through an `auth = "Maitento"` connector) is refused:
 * an approval is a person's decision, so an agent may never answer one, even its own.
 */
export async function answeringActor(db: Queryable, request: FastifyRequest): Promise<RequestActor> {
  const { keyId, namespace, role } = request.identity;
  if (keyId === 'platform-token') throw serverErrors.create('api:approvals:person-required');
  // A person signed in through single sign-on (docs/sso.md) answers as `person:<id>`, named as their provider names them.
  const personId = personOf(keyId);
  if (personId !== undefined) {
    const { rows } = await db.query<{ name: string | null; email: string | null; subject: string }>(
      'SELECT name, email, subject FROM mt_people WHERE id = $1',
      [personId],
    );
    const row = rows[0];
    return { keyId, keyName: row === undefined ? keyId : personLabel(row), role };
  }
  const { rows } = await db.query<{ name: string | null }>(
    'SELECT name FROM mt_api_keys WHERE id = $1 AND namespace = $2',
    [keyId, namespace],
  );
  return { keyId, keyName: rows[0]?.name ?? UNNAMED_KEY, role };
}

/**
 * Who made `request`, for the audit log (docs/audit.md): its key and role, and whether it came over the REST API or a
 * console session; with the request's id (`X-Request-Id`).
 */
export function auditContext(request: FastifyRequest, via: 'api' | 'console' = 'api'): AuditContext {
  const { keyId, role } = request.identity;
  if (personOf(keyId) !== undefined)
    return { actor: { kind: 'person', personId: keyId, role, via: 'console' }, requestId: request.id };
  return { actor: { kind: 'key', keyId, role, via }, requestId: request.id };
}

/** The refusals of an edit, which both approve routes may answer (decision 0215). */
export const EDIT_ERRORS = [
  'api:approvals:edit-not-allowed',
  'api:approvals:edit-invalid',
  'api:approvals:edit-stale',
  'api:approvals:edit-hash-required',
  'api:approvals:edit-outside-run',
] as const;

/**
 * The edit an approve request asks for (`arguments`, with the `requestHash` the approver saw), as the engine's
 * `ApprovalAnswer.edit`: nothing without `arguments`.
 */
export function editOf(body: object): { edit?: { arguments: unknown; requestHash?: string } } {
  const { arguments: args, requestHash } = body as { arguments?: unknown; requestHash?: string };
  if (args === undefined) return {};
  return { edit: { arguments: args, ...(requestHash === undefined ? {} : { requestHash }) } };
}

/** How a person's actor id starts: `person:<id>` (the id of their `mt_people` row), where a key's id would be. */
export const PERSON_PREFIX = 'person:';

/** The `mt_people` id of a person's actor id (`person:<id>`), or undefined for a key's. */
export function personOf(actorId: string): string | undefined {
  return actorId.startsWith(PERSON_PREFIX) ? actorId.slice(PERSON_PREFIX.length) : undefined;
}

/** How a person is named where a key's name would be: their name, and their email when they have both. */
export function personLabel(person: { name: string | null; email: string | null; subject: string }): string {
  if (person.name && person.email) return `${person.name} (${person.email})`;
  return person.name || person.email || person.subject;
}
