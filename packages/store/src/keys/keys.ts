import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Queryable } from '../db/db.js';
import { storeErrors } from '../errors.js';
import { bytes, iso } from '../internal/rows.js';
import { isUuid } from '../internal/uuid.js';
import { WAKE_CHANNEL } from '../wake/notify.js';

/** What a key may do: `admin` deploys and manages; `user` reads, runs and approves. */
export type KeyRole = 'admin' | 'user';

/** An API key as listed: never the key itself. */
export interface ApiKeyInfo {
  id: string;
  name: string | null;
  role: KeyRole;
  createdAt: string;
}

/** A key just created: `key` is shown this once and stored only as its hash. */
export interface CreatedApiKey extends ApiKeyInfo {
  key: string;
}

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

/** Stores a key (a new random one unless `key` is given) for `namespace` and returns it once. */
export async function createApiKey(
  db: Queryable,
  namespace: string,
  options: { role: KeyRole; name?: string | null; key?: string },
): Promise<CreatedApiKey> {
  const key = options.key ?? generateApiKey();
  const id = randomUUID();
  const { rows } = await db.query<{ created_at: Date }>(
    'INSERT INTO mt_api_keys (id, namespace, name, role, key_hash) VALUES ($1, $2, $3, $4, $5) RETURNING created_at',
    [id, namespace, options.name ?? null, options.role, hashKey(key)],
  );
  return { id, name: options.name ?? null, role: options.role, createdAt: iso(rows[0].created_at), key };
}

/** Lists the keys of a namespace, oldest first. */
export async function listApiKeys(db: Queryable, namespace: string): Promise<ApiKeyInfo[]> {
  const { rows } = await db.query<{ id: string; name: string | null; role: KeyRole; created_at: Date }>(
    'SELECT id, name, role, created_at FROM mt_api_keys WHERE namespace = $1 ORDER BY created_at, id',
    [namespace],
  );
  return rows.map((row) => ({ id: row.id, name: row.name, role: row.role, createdAt: iso(row.created_at) }));
}

/** Deletes a key of `namespace` (refused from the next request, on every server); another namespace's is `api:keys:not-found`. */
export async function deleteApiKey(db: Queryable, namespace: string, id: string): Promise<void> {
  if (!isUuid(id)) throw storeErrors.create('api:keys:not-found', { id });
  // One statement: the delete steps the cache epoch (schema 7), and `key:<id>` wakes the key's open streams and MCP
  // sessions, only when the key existed.
  const { rows } = await db.query(
    'WITH gone AS (DELETE FROM mt_api_keys WHERE namespace = $1 AND id = $2 RETURNING 1) ' +
      `SELECT pg_notify('${WAKE_CHANNEL}', 'key:' || $2::text) FROM gone`,
    [namespace, id],
  );
  if (rows.length === 0) throw storeErrors.create('api:keys:not-found', { id });
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
