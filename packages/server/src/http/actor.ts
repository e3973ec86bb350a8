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
  return { actor: { kind: 'key', keyId, role, via }, requestId: request.id };
}
