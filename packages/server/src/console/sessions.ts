import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { type Db, type KeyIdentity, type KeyRole, type Queryable, recordAudit } from '@maitento/store';
import { PERSON_PREFIX, personLabel } from '../http/actor.js';
import type { PersonRole } from '../server/settings.js';

/** How long a console sign-in lasts. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

/**
 * A signed-in console session: the key it was opened with (never the key itself), or the person signed in through
 * single sign-on (their `identity.keyId` is `person:<id>`, their role the one mapped in the namespace shown), and its
 * CSRF token.
 */
export interface ConsoleSession {
  identity: KeyIdentity;
  keyName: string;
  csrfToken: string;
  /** A person's session: who they are and their role in each namespace their claims map to. */
  person?: { id: string; roles: Record<string, PersonRole> };
}

/** A person as their provider's ID token names them (docs/sso.md). */
export interface PersonClaims {
  issuer: string;
  subject: string;
  name: string | null;
  email: string | null;
}

function tokenHash(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/**
 * Opens a session for an authenticated key, with its `console.signed-in` audit row; resolves with the cookie's random
 * token (only its hash is stored).
 */
export async function openSession(db: Db, identity: KeyIdentity, requestId: string): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await db.transaction(async (tx) => {
    await tx.query(
      'INSERT INTO mt_console_sessions (token_hash, key_id, csrf_token, expires_at) ' +
        "VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')",
      [tokenHash(token), identity.keyId, randomBytes(24).toString('base64url'), SESSION_TTL_MS],
    );
    await recordAudit(tx, {
      actor: { kind: 'key', keyId: identity.keyId, role: identity.role, via: 'console' },
      requestId,
      namespace: identity.namespace,
      action: 'console.signed-in',
      target: { kind: 'key', id: identity.keyId },
    });
  });
  // Sessions past their time are removed as new ones open, so the table holds only live ones for long.
  await db.query('DELETE FROM mt_console_sessions WHERE expires_at < now()');
  return token;
}

/** The live session of a cookie token, with its key as it is now (a deleted key has none: the row went with it). */
export async function findSession(db: Db, token: string): Promise<ConsoleSession | undefined> {
  const { rows } = await db.query<{
    key_id: string | null;
    namespace: string;
    role: KeyRole;
    name: string | null;
    csrf_token: string;
    person_id: string | null;
    roles: Record<string, PersonRole> | null;
    person_name: string | null;
    email: string | null;
    subject: string | null;
  }>(
    'SELECT s.key_id, coalesce(k.namespace, s.namespace) AS namespace, k.role, k.name, s.csrf_token, ' +
      's.person_id, s.roles, p.name AS person_name, p.email, p.subject FROM mt_console_sessions s ' +
      'LEFT JOIN mt_api_keys k ON k.id = s.key_id LEFT JOIN mt_people p ON p.id = s.person_id ' +
      'WHERE s.token_hash = $1 AND s.expires_at > now() AND (k.id IS NOT NULL OR p.id IS NOT NULL)',
    [tokenHash(token)],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  if (row.person_id !== null) {
    const roles = row.roles ?? {};
    return {
      identity: { keyId: PERSON_PREFIX + row.person_id, namespace: row.namespace, role: roles[row.namespace] },
      keyName: personLabel({ name: row.person_name, email: row.email, subject: row.subject ?? row.person_id }),
      csrfToken: row.csrf_token,
      person: { id: row.person_id, roles },
    };
  }
  if (row.key_id === null) return undefined;
  return {
    identity: { keyId: row.key_id, namespace: row.namespace, role: row.role },
    keyName: row.name ?? '(unnamed key)',
    csrfToken: row.csrf_token,
  };
}

/** Ends the session of a cookie token, with its `console.signed-out` audit row (none when it had ended already). */
export async function closeSession(db: Db, token: string, requestId: string): Promise<void> {
  await db.transaction(async (tx) => {
    const person = await tx.query<{ person_id: string; roles: Record<string, PersonRole> | null }>(
      'DELETE FROM mt_console_sessions WHERE token_hash = $1 AND person_id IS NOT NULL RETURNING person_id, roles',
      [tokenHash(token)],
    );
    if (person.rows[0] !== undefined) {
      const { person_id, roles } = person.rows[0];
      await personAudit(tx, 'console.signed-out', person_id, roles ?? {}, requestId);
      return;
    }
    const { rows } = await tx.query<{ key_id: string; namespace: string; role: KeyRole }>(
      'DELETE FROM mt_console_sessions s USING mt_api_keys k WHERE s.token_hash = $1 AND k.id = s.key_id ' +
        'RETURNING s.key_id, k.namespace, k.role',
      [tokenHash(token)],
    );
    const row = rows[0];
    if (row === undefined) return;
    await recordAudit(tx, {
      actor: { kind: 'key', keyId: row.key_id, role: row.role, via: 'console' },
      requestId,
      namespace: row.namespace,
      action: 'console.signed-out',
      target: { kind: 'key', id: row.key_id },
    });
  });
}

/** The namespace a person's console opens on: `default` when they have a role there, else the first by name. */
export function firstNamespace(roles: Record<string, PersonRole>): string {
  if (roles.default !== undefined) return 'default';
  return Object.keys(roles).sort()[0]!;
}

/** One audit row per namespace the person has a role in: each namespace's admins see who came and went. */
async function personAudit(
  tx: Queryable,
  action: 'console.signed-in' | 'console.signed-out',
  personId: string,
  roles: Record<string, PersonRole>,
  requestId: string,
  after?: Record<string, unknown>,
): Promise<void> {
  for (const [namespace, role] of Object.entries(roles)) {
    await recordAudit(tx, {
      actor: { kind: 'person', personId: PERSON_PREFIX + personId, role, via: 'console' },
      requestId,
      namespace,
      action,
      target: { kind: 'person', id: personId },
      after: after === undefined ? null : { ...after, role },
    });
  }
}

/**
 * Opens a session for a person signed in through single sign-on (docs/sso.md): their `mt_people` row (made on their
 * first sign-in, its name and email refreshed on every one), the session with their role in each namespace, ending
 * at `expiresAt` (the sooner of the longest session and the ID token's expiry), and a `console.signed-in` audit row in
 * each of those namespaces. Resolves with the cookie's random token (only its hash is stored).
 */
export async function openPersonSession(
  db: Db,
  person: PersonClaims,
  roles: Record<string, PersonRole>,
  expiresAt: Date,
  requestId: string,
): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await db.transaction(async (tx) => {
    const { rows } = await tx.query<{ id: string }>(
      'INSERT INTO mt_people (id, issuer, subject, name, email) VALUES ($1, $2, $3, $4, $5) ' +
        'ON CONFLICT (issuer, subject) DO UPDATE SET name = EXCLUDED.name, email = EXCLUDED.email, signed_in_at = now() ' +
        'RETURNING id',
      [randomUUID(), person.issuer, person.subject, person.name, person.email],
    );
    const personId = rows[0]!.id;
    await tx.query(
      'INSERT INTO mt_console_sessions (token_hash, person_id, roles, namespace, csrf_token, expires_at) ' +
        'VALUES ($1, $2, $3, $4, $5, $6)',
      [
        tokenHash(token),
        personId,
        JSON.stringify(roles),
        firstNamespace(roles),
        randomBytes(24).toString('base64url'),
        expiresAt,
      ],
    );
    await personAudit(tx, 'console.signed-in', personId, roles, requestId, {
      name: person.name,
      email: person.email,
      issuer: person.issuer,
      subject: person.subject,
    });
  });
  await db.query('DELETE FROM mt_console_sessions WHERE expires_at < now()');
  return token;
}

/** Shows another namespace the person has a role in; false when they have none there (nothing changes). */
export async function switchNamespace(db: Db, token: string, namespace: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'UPDATE mt_console_sessions SET namespace = $2 WHERE token_hash = $1 AND person_id IS NOT NULL AND roles ? $2',
    [tokenHash(token), namespace],
  );
  return (rowCount ?? 0) > 0;
}
