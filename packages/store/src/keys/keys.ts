import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { sharedErrors } from '@maitento/errors';
import type * as wire from '@maitento/sdk/wire';
import type { Queryable } from '../db/db.js';
import { storeErrors } from '../errors.js';
import { bytes, iso } from '../internal/rows.js';
import { isUuid } from '../internal/uuid.js';
import { WAKE_CHANNEL } from '../wake/notify.js';
import { secretAccess } from './secret-access.js';

/** What a key may do: `admin` deploys and manages; `user` reads, runs and approves. */
export type KeyRole = wire.KeyRole;

/** An API key as listed: never the key itself. */
export type ApiKeyInfo = wire.KeyInfo;

/** A key just created: `key` is shown this once and stored only as its hash. */
export type CreatedApiKey = wire.CreatedKey;

/** Who a valid key belongs to. */
export interface KeyIdentity {
  keyId: string;
  namespace: string;
  role: KeyRole;
}

/** Makes a new high-entropy key: `mt_` then 32 random bytes in base64url. */
export function generateApiKey(): string {
  return `mt_${randomBytes(32).toString('base64url')}`;
}

function hashKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/**
 * Stores a key (a new random one unless `key` is given) for `namespace`, with the secrets of `secrets` granted to it,
 * and returns it once. A secret id that is none of the namespace's is `api:secrets:not-found`, and nothing is stored.
 */
export async function createApiKey(
  db: Queryable,
  namespace: string,
  options: { role: KeyRole; name?: string | null; key?: string; secrets?: string[] },
): Promise<CreatedApiKey> {
  const key = options.key ?? generateApiKey();
  const id = randomUUID();
  const secrets = [...new Set((options.secrets ?? []).map((s) => s.toLowerCase()))].sort();
  const invalid = secrets.find((s) => !isUuid(s));
  if (invalid !== undefined) throw sharedErrors.create('api:secrets:not-found', { ref: invalid });
  // One statement: the key is stored only when every granted secret is one of the namespace's, with its grants.
  const { rows } = await db.query<{ created_at: Date }>(
    'WITH wanted AS (SELECT id FROM mt_secrets WHERE namespace = $2 AND id = ANY($6::uuid[])), ' +
      'made AS (INSERT INTO mt_api_keys (id, namespace, name, role, key_hash) ' +
      'SELECT $1, $2, $3, $4, $5 WHERE (SELECT count(*) FROM wanted) = $7 RETURNING id, created_at), ' +
      'granted AS (INSERT INTO mt_key_secret_grants (key_id, secret_id) SELECT made.id, wanted.id FROM made, wanted) ' +
      'SELECT created_at FROM made',
    [id, namespace, options.name ?? null, options.role, hashKey(key), secrets, secrets.length],
  );
  if (rows[0] === undefined) {
    const found = await secretAccess(db, namespace, null, secrets);
    throw sharedErrors.create('api:secrets:not-found', { ref: secrets.find((s) => !found.has(s)) ?? '' });
  }
  return {
    id,
    name: options.name ?? null,
    role: options.role,
    secrets,
    createdAt: iso(rows[0].created_at),
    key,
  };
}

/** Lists the keys of a namespace, oldest first. */
export async function listApiKeys(db: Queryable, namespace: string): Promise<ApiKeyInfo[]> {
  const { rows } = await db.query<{
    id: string;
    name: string | null;
    role: KeyRole;
    secrets: string[] | null;
    created_at: Date;
  }>(
    'SELECT k.id, k.name, k.role, k.created_at, ' +
      '(SELECT array_agg(g.secret_id::text ORDER BY g.secret_id::text) FROM mt_key_secret_grants g WHERE g.key_id = k.id) AS secrets ' +
      'FROM mt_api_keys k WHERE k.namespace = $1 ORDER BY k.created_at, k.id',
    [namespace],
  );
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    role: row.role,
    secrets: row.secrets ?? [],
    createdAt: iso(row.created_at),
  }));
}

/** Deletes a key of `namespace` (refused from the next request, on every server); another namespace's is `api:keys:not-found`. */
export async function deleteApiKey(
  db: Queryable,
  namespace: string,
  id: string,
): Promise<{ name: string | null; role: KeyRole }> {
  if (!isUuid(id)) throw storeErrors.create('api:keys:not-found', { id });
  // One statement: the delete steps the cache epoch (schema 7), and `key:<id>` wakes the key's open streams and MCP
  // sessions, only when the key existed.
  const { rows } = await db.query<{ name: string | null; role: KeyRole }>(
    'WITH gone AS (DELETE FROM mt_api_keys WHERE namespace = $1 AND id = $2 RETURNING name, role) ' +
      `SELECT name, role, pg_notify('${WAKE_CHANNEL}', 'key:' || $2::text) FROM gone`,
    [namespace, id],
  );
  if (rows.length === 0) throw storeErrors.create('api:keys:not-found', { id });
  return { name: rows[0].name, role: rows[0].role };
}

/** The ids among `ids` that are stored keys (the others were deleted, or never were). */
export async function existingApiKeys(db: Queryable, ids: string[]): Promise<Set<string>> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM mt_api_keys WHERE id = ANY($1::uuid[])', [
    ids.filter(isUuid),
  ]);
  return new Set(rows.map((row) => row.id));
}

/** Returns who `key` belongs to, or undefined when it is no stored key. */
export async function authenticateApiKey(db: Queryable, key: string): Promise<KeyIdentity | undefined> {
  const hash = hashKey(key);
  const { rows } = await db.query<{ id: string; namespace: string; role: KeyRole; key_hash: unknown }>(
    'SELECT id, namespace, role, key_hash FROM mt_api_keys WHERE key_hash = $1',
    [hash],
  );
  const row = rows[0];
  // The index lookup finds the row by hash; the constant-time comparison is the actual check.
  if (!row || !timingSafeEqual(bytes(row.key_hash), hash)) return undefined;
  return { keyId: row.id, namespace: row.namespace, role: row.role };
}

/**
 * Whether the stored key `id` of `namespace` has been deleted (one indexed read, made right before a call that
 * waited). An id that names no stored key by design, a platform token's (`platform-token`), is never deleted.
 */
export async function apiKeyDeleted(db: Queryable, namespace: string, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const { rows } = await db.query('SELECT 1 FROM mt_api_keys WHERE namespace = $1 AND id = $2', [namespace, id]);
  return rows.length === 0;
}
