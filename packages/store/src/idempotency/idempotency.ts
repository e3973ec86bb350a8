import { AsyncLocalStorage } from 'node:async_hooks';
import { timingSafeEqual } from 'node:crypto';
import type { Queryable } from '../db/db.js';
import { storeErrors } from '../errors.js';
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
 * What a keyed request did, recorded in the transaction that did it ({@link bindIdempotentEffect}): the run it started
 * or acted on, or the approval it answered, and the status it answers with. A retry whose first attempt committed this
 * but never recorded its answer (its server was killed, its outcome stayed unknown) answers from it: the thing's view
 * now, with this status.
 */
export interface IdempotentEffect {
  kind: 'run' | 'approval';
  id: string;
  status: number;
}

/**
 * What {@link claimIdempotencyKey} found: the caller runs the request (holding the claim `token`), replays its answer,
 * answers from its committed effect, or refuses it.
 */
export type IdempotencyClaim =
  | { kind: 'claimed'; token: string }
  | { kind: 'replay'; answer: StoredAnswer }
  | { kind: 'effect'; effect: IdempotentEffect }
  | { kind: 'in-progress' }
  | { kind: 'reused' };

interface Row {
  fingerprint: unknown;
  status: number | null;
  effect: IdempotentEffect | null;
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
// A claim's token is its record's created_at, to the microsecond: a takeover sets a new one (a renewal does not: it
// sets renewed_at, so the token a request's effect transaction fences on stays the same while the request runs).
const HELD_BY = '($4::text IS NULL OR created_at = $4::timestamptz)';
// When an in-progress record's lease was last begun: its claim or takeover, or its latest renewal.
const LEASED_AT = 'coalesce(renewed_at, created_at)';

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
      'SELECT fingerprint, status, effect, iv, ciphertext, tag, ' +
        `${LEASED_AT} < now() - make_interval(secs => $4) AS stale FROM mt_idempotency_keys WHERE ${WHERE}`,
      [...params, leaseSeconds],
    );
    const row = rows[0];
    if (!row) continue;
    const stored = bytes(row.fingerprint);
    const same = stored.length === fingerprint.length && timingSafeEqual(stored, fingerprint);
    if (row.status === null) {
      // The first attempt's effect committed (its answer was never recorded, or is not yet): never run it again.
      if (row.effect !== null) return same ? { kind: 'effect', effect: row.effect } : { kind: 'reused' };
      if (!row.stale) return { kind: 'in-progress' };
      // The holder crashed before any effect. The conditions are checked again under the row lock, so of two retries
      // one wins, and a holder's effect transaction (which holds the same lock) either committed first (then this takes
      // nothing) or fails its fence once this has committed.
      const taken = await db.query<{ token: string }>(
        `UPDATE mt_idempotency_keys SET fingerprint = $4, created_at = clock_timestamp(), renewed_at = NULL ` +
          `WHERE ${WHERE} AND status IS NULL AND effect IS NULL AND ${LEASED_AT} < now() - make_interval(secs => $5) ` +
          'RETURNING created_at::text AS token',
        [...params, fingerprint, leaseSeconds],
      );
      return taken.rows[0] ? { kind: 'claimed', token: taken.rows[0].token } : { kind: 'in-progress' };
    }
    if (!same) return { kind: 'reused' };
    const sealed = { iv: bytes(row.iv), ciphertext: bytes(row.ciphertext), tag: bytes(row.tag) };
    const answer = JSON.parse(openAnswer(secretKey, scope, sealed)) as StoredAnswer;
    return { kind: 'replay', answer: { ...answer, status: row.status } };
  }
  return { kind: 'in-progress' };
}

/**
 * Renews the lease of the in-progress record of `scope` held by the claim `token`, for another full lease from now.
 * Returns the claim's token (unchanged: a renewal sets `renewed_at`), or undefined when the claim no longer holds the
 * record (taken over after its lease ran out, completed or released).
 */
export async function renewIdempotencyKey(
  db: Queryable,
  scope: IdempotencyScope,
  token: string,
): Promise<string | undefined> {
  const { rows } = await db.query<{ token: string }>(
    `UPDATE mt_idempotency_keys SET renewed_at = clock_timestamp() WHERE ${WHERE} AND created_at = $4::timestamptz ` +
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
 * while that claim still holds the record, and only while no effect of its request committed (the delete waits for
 * the row lock an effect transaction holds, and then finds its effect: the record stays, and a retry answers from it).
 */
export async function releaseIdempotencyKey(db: Queryable, scope: IdempotencyScope, token?: string): Promise<void> {
  await db.query(
    `DELETE FROM mt_idempotency_keys WHERE ${WHERE} AND ${HELD_BY} AND status IS NULL AND effect IS NULL`,
    [scope.namespace, scope.apiKeyId, scope.key, token ?? null],
  );
}

/** The Idempotency-Key a request holds while its handler runs: its scope and its claim's token. */
export interface HeldIdempotencyKey {
  scope: IdempotencyScope;
  token: string;
  /** The keys an answer bound by {@link bindIdempotentAnswer} is sealed under. */
  secretKey: SecretKeys;
}

const held = new AsyncLocalStorage<HeldIdempotencyKey>();

/**
 * Runs `fn` (a keyed request's handler) with `key` as the key it holds: the write transactions it makes through
 * {@link bindIdempotentEffect} record their effect on that key's record.
 */
export function withIdempotencyKey<T>(key: HeldIdempotencyKey, fn: () => T): T {
  return held.run(key, fn);
}

/**
 * Called inside the transaction that makes a request's effect (a run's start, a message, an answer): when the request
 * holds an Idempotency-Key ({@link withIdempotencyKey}), records `effect` on its record in the same transaction, so
 * the key and the effect commit together (Stripe's rule). It fences: when the claim no longer holds the record (a
 * retry took it over after the lease ended, or it was released), it fails with `api:store:idempotency-key-lost` and the
 * transaction rolls back, so nothing of the request commits beside the other attempt's. Outside a keyed request it
 * does nothing and sends nothing. The first effect a request binds is the one kept.
 */
export async function bindIdempotentEffect(tx: Queryable, effect: IdempotentEffect): Promise<void> {
  const key = held.getStore();
  if (key === undefined) return;
  const { rowCount } = await tx.query(
    `UPDATE mt_idempotency_keys SET effect = coalesce(effect, $5::jsonb) WHERE ${WHERE} ` +
      'AND created_at = $4::timestamptz AND status IS NULL',
    [key.scope.namespace, key.scope.apiKeyId, key.scope.key, key.token, JSON.stringify(effect)],
  );
  if (rowCount === 0) throw storeErrors.create('api:store:idempotency-key-lost', { key: key.scope.key });
}

/**
 * Like {@link bindIdempotentEffect}, for a request whose whole answer is known inside its transaction (a new API key,
 * whose secret is given only once; a new secret; a deleted key): completes the key's record with `answer`, sealed, in
 * the same transaction, fenced the same way. A retry at any time replays it.
 */
export async function bindIdempotentAnswer(tx: Queryable, answer: StoredAnswer): Promise<void> {
  const key = held.getStore();
  if (key === undefined) return;
  const { scope } = key;
  const sealed = seal(currentKey(key.secretKey), scope.namespace, sealId(scope), JSON.stringify(answer));
  const { rowCount } = await tx.query(
    `UPDATE mt_idempotency_keys SET status = $5, iv = $6, ciphertext = $7, tag = $8 WHERE ${WHERE} ` +
      'AND created_at = $4::timestamptz AND status IS NULL',
    [scope.namespace, scope.apiKeyId, scope.key, key.token, answer.status, sealed.iv, sealed.ciphertext, sealed.tag],
  );
  if (rowCount === 0) throw storeErrors.create('api:store:idempotency-key-lost', { key: scope.key });
}
