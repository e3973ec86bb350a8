import { timingSafeEqual } from 'node:crypto';
import type { Queryable } from '../db/db.js';
import { seal, unseal } from '../secrets/cipher.js';
import { allKeys, currentKey, type SecretKeys } from '../secrets/keyring.js';

/** How long a recorded Idempotency-Key counts; an older record is replaced by the next request. */
export const IDEMPOTENCY_TTL_HOURS = 24;

/**
 * How long an in-progress record holds its key without renewal: the longest request (a tool call's 100 s deadline)
 * plus two minutes. The holder renews it while its request runs ({@link renewIdempotencyKey}), so a record still in
 * progress after that belongs to a request that crashed, and a retry takes it over.
 */
export const IDEMPOTENCY_LEASE_SECONDS = 220;

/** Who sent an Idempotency-Key: keys of different namespaces or API keys never meet. */
export interface IdempotencyScope {
  namespace: string;
  apiKeyId: string;
  key: string;
}

/** A recorded answer: its status, content type and body as sent. */
export interface StoredAnswer {
  status: number;
  contentType?: string;
  body: string;
}

/**
 * What {@link claimIdempotencyKey} found: the caller runs the request (holding the claim `token`), replays, or
 * refuses it.
 */
export type IdempotencyClaim =
  | { kind: 'claimed'; token: string }
  | { kind: 'replay'; answer: StoredAnswer }
  | { kind: 'in-progress' }
  | { kind: 'reused' };

interface Row {
  fingerprint: unknown;
  status: number | null;
  stale: boolean;
  iv: unknown;
  ciphertext: unknown;
  tag: unknown;
}

function bytes(value: unknown): Buffer {
  return Buffer.isBuffer(value) ? value : Buffer.from(value as Uint8Array);
}

// The AAD names namespace, key id and Idempotency-Key: a sealed answer copied to another row does not open.
function sealId(scope: IdempotencyScope): string {
  return `idempotency:${scope.apiKeyId}:${scope.key}`;
}

// Answers are not re-wrapped by a master key rotation (they live 24 h): one sealed under a previous key opens
// while that key is still given as MT_SECRET_KEY_PREVIOUS.
function openAnswer(keys: SecretKeys, scope: IdempotencyScope, sealed: Parameters<typeof unseal>[3]): string {
  let failure: unknown;
  for (const { key } of allKeys(keys)) {
    try {
      return unseal(key, scope.namespace, sealId(scope), sealed);
    } catch (error) {
      failure ??= error;
    }
  }
  throw failure;
}

const WHERE = 'namespace = $1 AND api_key_id = $2 AND idem_key = $3';
// A claim's token is its record's created_at, to the microsecond: a takeover or a renewal sets a new one.
const HELD_BY = '($4::text IS NULL OR created_at = $4::timestamptz)';

/**
 * Records that the request `fingerprint` is being handled under `scope` (expired records of the namespace are
 * deleted first, so an expired one is replaced; an in-progress one not renewed for `leaseSeconds` is taken over),
 * or tells what an earlier request with the same key left: its answer, that it is still running, or that it
 * differed.
 */
export async function claimIdempotencyKey(
  db: Queryable,
  secretKey: SecretKeys,
  scope: IdempotencyScope,
  fingerprint: Buffer,
  leaseSeconds: number = IDEMPOTENCY_LEASE_SECONDS,
): Promise<IdempotencyClaim> {
  const params = [scope.namespace, scope.apiKeyId, scope.key];
  // Expired records of the whole namespace go, not only this key's: the table is purged as it is used.
  await db.query(
    'DELETE FROM mt_idempotency_keys WHERE namespace = $1 AND created_at < now() - make_interval(hours => $2)',
    [scope.namespace, IDEMPOTENCY_TTL_HOURS],
  );
  // Two attempts: a record deleted between the insert and the select (a failed request) is claimed again.
  for (let attempt = 0; attempt < 2; attempt++) {
    const inserted = await db.query<{ token: string }>(
      'INSERT INTO mt_idempotency_keys (namespace, api_key_id, idem_key, fingerprint) VALUES ($1, $2, $3, $4) ' +
        'ON CONFLICT DO NOTHING RETURNING created_at::text AS token',
      [...params, fingerprint],
    );
    if (inserted.rows[0]) return { kind: 'claimed', token: inserted.rows[0].token };
    const { rows } = await db.query<Row>(
      'SELECT fingerprint, status, iv, ciphertext, tag, ' +
        `created_at < now() - make_interval(secs => $4) AS stale FROM mt_idempotency_keys WHERE ${WHERE}`,
      [...params, leaseSeconds],
    );
    const row = rows[0];
    if (!row) continue;
    if (row.status === null) {
      if (!row.stale) return { kind: 'in-progress' };
      // The holder crashed. The conditions are checked again under the row lock, so of two retries one wins.
      const taken = await db.query<{ token: string }>(
        `UPDATE mt_idempotency_keys SET fingerprint = $4, created_at = clock_timestamp() WHERE ${WHERE} ` +
          'AND status IS NULL AND created_at < now() - make_interval(secs => $5) RETURNING created_at::text AS token',
        [...params, fingerprint, leaseSeconds],
      );
      return taken.rows[0] ? { kind: 'claimed', token: taken.rows[0].token } : { kind: 'in-progress' };
    }
    const stored = bytes(row.fingerprint);
    if (stored.length !== fingerprint.length || !timingSafeEqual(stored, fingerprint)) return { kind: 'reused' };
    const sealed = { iv: bytes(row.iv), ciphertext: bytes(row.ciphertext), tag: bytes(row.tag) };
    const answer = JSON.parse(openAnswer(secretKey, scope, sealed)) as StoredAnswer;
    return { kind: 'replay', answer: { ...answer, status: row.status } };
  }
  return { kind: 'in-progress' };
}

/**
 * Renews the lease of the in-progress record of `scope` held by the claim `token`, for another full lease from now.
 * Returns the claim's new token (the old one no longer holds the record), or undefined when the claim no longer
 * holds it (taken over after its lease ran out, completed or released).
 */
export async function renewIdempotencyKey(
  db: Queryable,
  scope: IdempotencyScope,
  token: string,
): Promise<string | undefined> {
  const { rows } = await db.query<{ token: string }>(
    `UPDATE mt_idempotency_keys SET created_at = clock_timestamp() WHERE ${WHERE} AND created_at = $4::timestamptz ` +
      'AND status IS NULL RETURNING created_at::text AS token',
    [scope.namespace, scope.apiKeyId, scope.key, token],
  );
  return rows[0]?.token;
}

/**
 * Completes the claimed record of `scope` with the answer, sealed under `secretKey`; given the claim's `token`,
 * only while that claim still holds the record (a holder whose lease was taken over writes nothing).
 */
export async function completeIdempotencyKey(
  db: Queryable,
  secretKey: SecretKeys,
  scope: IdempotencyScope,
  answer: StoredAnswer,
  token?: string,
): Promise<void> {
  const sealed = seal(currentKey(secretKey), scope.namespace, sealId(scope), JSON.stringify(answer));
  await db.query(
    `UPDATE mt_idempotency_keys SET status = $5, iv = $6, ciphertext = $7, tag = $8 WHERE ${WHERE} AND ${HELD_BY} ` +
      'AND status IS NULL',
    [
      scope.namespace,
      scope.apiKeyId,
      scope.key,
      token ?? null,
      answer.status,
      sealed.iv,
      sealed.ciphertext,
      sealed.tag,
    ],
  );
}

/**
 * Forgets the in-progress record of `scope`, so a retry runs the request again; given the claim's `token`, only
 * while that claim still holds the record.
 */
export async function releaseIdempotencyKey(db: Queryable, scope: IdempotencyScope, token?: string): Promise<void> {
  await db.query(`DELETE FROM mt_idempotency_keys WHERE ${WHERE} AND ${HELD_BY} AND status IS NULL`, [
    scope.namespace,
    scope.apiKeyId,
    scope.key,
    token ?? null,
  ]);
}
