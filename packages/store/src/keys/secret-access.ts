import type { Queryable } from '../db/db.js';
import { isUuid } from '../internal/uuid.js';

/**
 * Who may use a secret, decided here and only here (docs/security.md, "Who may use a secret"): an admin key uses
 * every secret of its namespace; a user key (or a platform token, or no key) only the secrets granted to it when it
 * was made. Answers, for each id of `ids` that is a secret of `namespace`, whether `keyId` may use it; an id that is
 * no secret of the namespace is absent (one statement, never cached: grants and roles are read as they are now).
 */
export async function secretAccess(
  db: Queryable,
  namespace: string,
  keyId: string | null,
  ids: string[],
): Promise<Map<string, boolean>> {
  const wanted = [...new Set(ids.filter(isUuid).map((id) => id.toLowerCase()))];
  if (wanted.length === 0) return new Map();
  const key = keyId !== null && isUuid(keyId) ? keyId : null;
  const { rows } = await db.query<{ id: string; allowed: boolean }>(
    'SELECT s.id::text AS id, (' +
      "EXISTS (SELECT 1 FROM mt_api_keys k WHERE k.id = $2::uuid AND k.namespace = $1 AND k.role = 'admin') OR " +
      'EXISTS (SELECT 1 FROM mt_key_secret_grants g WHERE g.key_id = $2::uuid AND g.secret_id = s.id)) AS allowed ' +
      'FROM mt_secrets s WHERE s.namespace = $1 AND s.id = ANY($3::uuid[])',
    [namespace, key, wanted],
  );
  return new Map(rows.map((row) => [row.id, row.allowed === true]));
}
