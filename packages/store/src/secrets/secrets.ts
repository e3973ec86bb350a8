import { randomUUID } from 'node:crypto';
import { sharedErrors } from '@maitento/errors';
import { CHANGE_CHANNEL, changePayload } from '../cache/changes.js';
import type { Queryable } from '../db/db.js';
import { storeErrors } from '../errors.js';
import { bytes, isUniqueViolation, iso } from '../internal/rows.js';
import { isUuid } from '../internal/uuid.js';
import { seal, unseal } from './cipher.js';

/** A secret as listed: its id and name, never its value. */
export interface SecretInfo {
  id: string;
  name: string;
  createdAt: string;
  updatedAt: string;
}

interface SecretRow {
  id: string;
  name: string;
  created_at: Date;
  updated_at: Date;
}

function info(row: SecretRow): SecretInfo {
  return { id: row.id, name: row.name, createdAt: iso(row.created_at), updatedAt: iso(row.updated_at) };
}

/** Stores a new secret of `namespace`, encrypted under `key`; a name already taken is `api:secrets:exists`. */
export async function createSecret(
  db: Queryable,
  key: Buffer,
  namespace: string,
  input: { name: string; value: string },
): Promise<SecretInfo> {
  const id = randomUUID();
  const sealed = seal(key, namespace, id, input.value);
  try {
    const { rows } = await db.query<SecretRow>(
      'INSERT INTO mt_secrets (id, namespace, name, iv, ciphertext, tag) VALUES ($1, $2, $3, $4, $5, $6) ' +
        'RETURNING id, name, created_at, updated_at',
      [id, namespace, input.name, sealed.iv, sealed.ciphertext, sealed.tag],
    );
    return info(rows[0]);
  } catch (error) {
    if (isUniqueViolation(error)) throw storeErrors.create('api:secrets:exists', { name: input.name });
    throw error;
  }
}

/** Lists the secrets of `namespace` by id and name, in name order. */
export async function listSecrets(db: Queryable, namespace: string): Promise<SecretInfo[]> {
  const { rows } = await db.query<SecretRow>(
    'SELECT id, name, created_at, updated_at FROM mt_secrets WHERE namespace = $1 ORDER BY name',
    [namespace],
  );
  return rows.map(info);
}

/** The names of the secrets of `namespace`, for deploy-time checks. */
export async function secretNames(db: Queryable, namespace: string): Promise<string[]> {
  return (await listSecrets(db, namespace)).map((secret) => secret.name);
}

/** Replaces the value of secret `id` (a new IV too); an id of another namespace is `api:secrets:not-found`. */
export async function rotateSecret(
  db: Queryable,
  key: Buffer,
  namespace: string,
  id: string,
  value: string,
): Promise<SecretInfo> {
  if (!isUuid(id)) throw sharedErrors.create('api:secrets:not-found', { ref: id });
  const sealed = seal(key, namespace, id, value);
  // One statement: the NOTIFY (for other servers' secret caches) is sent only when the secret existed.
  const { rows } = await db.query<SecretRow>(
    'WITH changed AS (UPDATE mt_secrets SET iv = $3, ciphertext = $4, tag = $5, updated_at = now() ' +
      'WHERE namespace = $1 AND id = $2 RETURNING id, name, created_at, updated_at) ' +
      'SELECT id, name, created_at, updated_at, pg_notify($6, $7) FROM changed',
    [
      namespace,
      id,
      sealed.iv,
      sealed.ciphertext,
      sealed.tag,
      CHANGE_CHANNEL,
      changePayload({ kind: 'secret', namespace, id }),
    ],
  );
  if (!rows[0]) throw sharedErrors.create('api:secrets:not-found', { ref: id });
  return info(rows[0]);
}

/** Deletes secret `id` of `namespace`. */
export async function deleteSecret(db: Queryable, namespace: string, id: string): Promise<void> {
  if (!isUuid(id)) throw sharedErrors.create('api:secrets:not-found', { ref: id });
  const { rows } = await db.query(
    'WITH gone AS (DELETE FROM mt_secrets WHERE namespace = $1 AND id = $2 RETURNING 1) SELECT pg_notify($3, $4) FROM gone',
    [namespace, id, CHANGE_CHANNEL, changePayload({ kind: 'secret', namespace, id })],
  );
  if (rows.length === 0) throw sharedErrors.create('api:secrets:not-found', { ref: id });
}

/** Decrypts the secret of `namespace` found by `name` or by `id`; undefined when there is none. */
export async function readSecretValue(
  db: Queryable,
  key: Buffer,
  namespace: string,
  ref: { name: string } | { id: string },
): Promise<{ id: string; name: string; value: string } | undefined> {
  if ('id' in ref && !isUuid(ref.id)) return undefined;
  const [column, param] = 'id' in ref ? ['id', ref.id] : ['name', ref.name];
  const { rows } = await db.query<{ id: string; name: string; iv: unknown; ciphertext: unknown; tag: unknown }>(
    `SELECT id, name, iv, ciphertext, tag FROM mt_secrets WHERE namespace = $1 AND ${column} = $2`,
    [namespace, param],
  );
  const row = rows[0];
  if (!row) return undefined;
  try {
    const value = unseal(key, namespace, row.id, {
      iv: bytes(row.iv),
      ciphertext: bytes(row.ciphertext),
      tag: bytes(row.tag),
    });
    return { id: row.id, name: row.name, value };
  } catch {
    throw storeErrors.create('api:secrets:decrypt-failed', { id: row.id });
  }
}
