import { randomUUID } from 'node:crypto';
import { sharedErrors } from '@maitento/errors';
import type { CreateSecretParams } from '@maitento/sdk/wire';
import type { Queryable } from '../db/db.js';
import { storeErrors } from '../errors.js';
import { bytes, iso, isUniqueViolation } from '../internal/rows.js';
import { isUuid } from '../internal/uuid.js';
import { type Envelope, openSecret, sealSecret } from './envelope.js';
import { type SecretKeys, toKeyring } from './keyring.js';

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

/**
 * Stores a new secret of `namespace`, its value under a fresh data key wrapped by the current master key of
 * `keys`; a name already taken is `api:secrets:exists`.
 */
export async function createSecret(
  db: Queryable,
  keys: SecretKeys,
  namespace: string,
  input: CreateSecretParams,
): Promise<SecretInfo> {
  const id = randomUUID();
  const sealed = sealSecret(toKeyring(keys).current, namespace, id, input.value);
  try {
    const { rows } = await db.query<SecretRow>(
      'INSERT INTO mt_secrets (id, namespace, name, iv, ciphertext, tag, key_id, wrapped_key) ' +
        'VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id, name, created_at, updated_at',
      [id, namespace, input.name, sealed.iv, sealed.ciphertext, sealed.tag, sealed.keyId, sealed.wrappedKey],
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

/**
 * Replaces the value of secret `id` (a new data key, under the current master key); an id of another namespace
 * is `api:secrets:not-found`.
 */
export async function rotateSecret(
  db: Queryable,
  keys: SecretKeys,
  namespace: string,
  id: string,
  value: string,
): Promise<SecretInfo> {
  if (!isUuid(id)) throw sharedErrors.create('api:secrets:not-found', { ref: id });
  const sealed = sealSecret(toKeyring(keys).current, namespace, id, value);
  // The update steps the cache epoch (schema 7): every server reads it before its next request.
  const { rows } = await db.query<SecretRow>(
    'UPDATE mt_secrets SET iv = $3, ciphertext = $4, tag = $5, key_id = $6, wrapped_key = $7, updated_at = now() ' +
      'WHERE namespace = $1 AND id = $2 RETURNING id, name, created_at, updated_at',
    [namespace, id, sealed.iv, sealed.ciphertext, sealed.tag, sealed.keyId, sealed.wrappedKey],
  );
  if (!rows[0]) throw sharedErrors.create('api:secrets:not-found', { ref: id });
  return info(rows[0]);
}

/** Deletes secret `id` of `namespace`. */
export async function deleteSecret(db: Queryable, namespace: string, id: string): Promise<{ name: string }> {
  if (!isUuid(id)) throw sharedErrors.create('api:secrets:not-found', { ref: id });
  const { rows } = await db.query<{ name: string }>(
    'DELETE FROM mt_secrets WHERE namespace = $1 AND id = $2 RETURNING name',
    [namespace, id],
  );
  if (rows.length === 0) throw sharedErrors.create('api:secrets:not-found', { ref: id });
  return { name: rows[0].name };
}

/** A stored row's sealed columns as an {@link Envelope}. */
export function envelopeOf(row: EnvelopeRow): Envelope {
  return {
    iv: bytes(row.iv),
    ciphertext: bytes(row.ciphertext),
    tag: bytes(row.tag),
    keyId: row.key_id,
    wrappedKey: row.wrapped_key === null ? null : bytes(row.wrapped_key),
  };
}

/** The sealed columns of `mt_secrets` as a driver returns them. */
export interface EnvelopeRow {
  iv: unknown;
  ciphertext: unknown;
  tag: unknown;
  key_id: string | null;
  wrapped_key: unknown;
}

/**
 * Decrypts the secret of `namespace` found by `name` or by `id`, with whichever key of `keys` it is under;
 * undefined when there is none. A row that does not open fails with `api:secrets:decrypt-failed` or
 * `api:secrets:key-id-missing`, never with the value.
 */
export async function readSecretValue(
  db: Queryable,
  keys: SecretKeys,
  namespace: string,
  ref: { name: string } | { id: string },
): Promise<{ id: string; name: string; value: string } | undefined> {
  if ('id' in ref && !isUuid(ref.id)) return undefined;
  const [column, param] = 'id' in ref ? ['id', ref.id] : ['name', ref.name];
  const { rows } = await db.query<{ id: string; name: string } & EnvelopeRow>(
    `SELECT id, name, iv, ciphertext, tag, key_id, wrapped_key FROM mt_secrets WHERE namespace = $1 AND ${column} = $2`,
    [namespace, param],
  );
  const row = rows[0];
  if (!row) return undefined;
  return { id: row.id, name: row.name, value: openSecret(keys, namespace, row.id, envelopeOf(row)) };
}
