import { createHash, randomBytes } from 'node:crypto';
import { type Db, type KeyIdentity, type KeyRole, recordAudit } from '@maitento/store';

/** How long a console sign-in lasts. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

/** A signed-in console session: the key it was opened with (never the key itself) and its CSRF token. */
export interface ConsoleSession {
  identity: KeyIdentity;
  keyName: string;
  csrfToken: string;
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
    key_id: string;
    namespace: string;
    role: KeyRole;
    name: string | null;
    csrf_token: string;
  }>(
    'SELECT s.key_id, k.namespace, k.role, k.name, s.csrf_token FROM mt_console_sessions s ' +
      'JOIN mt_api_keys k ON k.id = s.key_id WHERE s.token_hash = $1 AND s.expires_at > now()',
    [tokenHash(token)],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  return {
    identity: { keyId: row.key_id, namespace: row.namespace, role: row.role },
    keyName: row.name ?? '(unnamed key)',
    csrfToken: row.csrf_token,
  };
}

/** Ends the session of a cookie token, with its `console.signed-out` audit row (none when it had ended already). */
export async function closeSession(db: Db, token: string, requestId: string): Promise<void> {
  await db.transaction(async (tx) => {
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
