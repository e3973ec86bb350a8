import type * as wire from '@maitento/sdk/wire';
import type { Db } from '../db/db.js';
import { storeErrors } from '../errors.js';
import { openSecret, sealSecret, unwrapDataKey, wrapDataKey } from './envelope.js';
import { allKeys, type SecretKeys, toKeyring } from './keyring.js';
import { type EnvelopeRow, envelopeOf } from './secrets.js';

/**
 * What {@link checkSecretKeys} found: the wire's secret-key status (the stored secrets per master key id, and the
 * previous keys none is under any more) and how many legacy secrets it converted to envelopes under the current key.
 */
export type SecretKeyCheck = wire.SecretKeyStatus & { converted: number };

/** What {@link rotateSecretKeys} did. */
export type SecretKeyRotation = Omit<wire.SecretKeyRotation, 'status'>;

interface Row extends EnvelopeRow {
  id: string;
  namespace: string;
}

const COLUMNS = 'id, namespace, iv, ciphertext, tag, key_id, wrapped_key';

// The other tables sealed with the secrets' envelopes, and the id prefix their AAD binds (a row id of one table
// never opens as another's): a connection's tokens and a connect link's PKCE verifier (docs/connections.md).
const SEALED_TABLES = [
  { table: 'mt_connections', prefix: 'connection:' },
  { table: 'mt_connect_links', prefix: 'connect-link:' },
  // An outbound webhook endpoint's signing secrets (docs/notifications.md).
  { table: 'mt_webhook_endpoints', prefix: 'webhook:' },
  // A dynamically registered OAuth client's secret (docs/connections.md).
  { table: 'mt_oauth_clients', prefix: 'oauth-client:' },
] as const;

async function countByKeyId(db: Db): Promise<Record<string, number>> {
  const { rows } = await db.query<{ key_id: string | null; n: number }>(
    'SELECT key_id, count(*)::int AS n FROM (SELECT key_id FROM mt_secrets UNION ALL ' +
      'SELECT key_id FROM mt_connections UNION ALL SELECT key_id FROM mt_connect_links UNION ALL ' +
      'SELECT key_id FROM mt_webhook_endpoints UNION ALL SELECT key_id FROM mt_oauth_clients) AS sealed GROUP BY key_id',
  );
  return Object.fromEntries(rows.map((row) => [row.key_id ?? 'legacy', row.n]));
}

// Re-wraps up to `batchSize` data keys of a connection or connect link table onto the current key; 0 when none is left.
async function moveSealedBatch(
  db: Db,
  keys: SecretKeys,
  batchSize: number,
  { table, prefix }: (typeof SEALED_TABLES)[number],
): Promise<number> {
  const current = toKeyring(keys).current;
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<Row>(
      `SELECT ${COLUMNS} FROM ${table} WHERE key_id <> $2 ORDER BY id LIMIT $1 FOR UPDATE`,
      [batchSize, current.id],
    );
    for (const row of rows) {
      const id = `${prefix}${row.id}`;
      const dataKey = unwrapDataKey(keys, row.namespace, id, row.key_id!, envelopeOf(row).wrappedKey!);
      await tx.query(`UPDATE ${table} SET key_id = $2, wrapped_key = $3 WHERE id = $1`, [
        row.id,
        current.id,
        wrapDataKey(current, row.namespace, id, dataKey),
      ]);
    }
    return rows.length;
  });
}

// Moves up to `batchSize` rows that are not under the current key onto it, in one transaction; 0 when none is left.
async function moveBatch(
  db: Db,
  keys: SecretKeys,
  batchSize: number,
  only: 'legacy' | 'all',
): Promise<{ rewrapped: number; converted: number }> {
  const current = toKeyring(keys).current;
  return db.transaction(async (tx) => {
    const where = only === 'legacy' ? 'key_id IS NULL' : 'key_id IS DISTINCT FROM $2';
    const params = only === 'legacy' ? [batchSize] : [batchSize, current.id];
    // FOR UPDATE: a value rotated meanwhile waits for this batch (and is then sealed under the current key).
    const { rows } = await tx.query<Row>(
      `SELECT ${COLUMNS} FROM mt_secrets WHERE ${where} ORDER BY id LIMIT $1 FOR UPDATE`,
      params,
    );
    let rewrapped = 0;
    let converted = 0;
    for (const row of rows) {
      const envelope = envelopeOf(row);
      if (envelope.keyId === null) {
        // A legacy row: its value was sealed straight under a master key, so it is sealed again.
        const sealed = sealSecret(current, row.namespace, row.id, openSecret(keys, row.namespace, row.id, envelope));
        await tx.query(
          'UPDATE mt_secrets SET iv = $2, ciphertext = $3, tag = $4, key_id = $5, wrapped_key = $6 WHERE id = $1',
          [row.id, sealed.iv, sealed.ciphertext, sealed.tag, sealed.keyId, sealed.wrappedKey],
        );
        converted++;
      } else {
        const dataKey = unwrapDataKey(keys, row.namespace, row.id, envelope.keyId, envelope.wrappedKey!);
        await tx.query('UPDATE mt_secrets SET key_id = $2, wrapped_key = $3 WHERE id = $1', [
          row.id,
          current.id,
          wrapDataKey(current, row.namespace, row.id, dataKey),
        ]);
        rewrapped++;
      }
    }
    return { rewrapped, converted };
  });
}

/**
 * The startup check: refuses with `api:secrets:key-id-missing` (naming the id) when a stored secret is under a
 * master key `keys` lacks, converts legacy secrets (sealed straight under MT_SECRET_KEY before envelopes) to
 * envelopes under the current key (`api:secrets:decrypt-failed` when one opens with no key given), and opens one
 * data key per master key id so a wrong key with a colliding id is caught too.
 */
export async function checkSecretKeys(db: Db, keys: SecretKeys, batchSize = 100): Promise<SecretKeyCheck> {
  const ring = toKeyring(keys);
  const held = new Set(allKeys(ring).map((key) => key.id));
  const before = await countByKeyId(db);
  const missing = Object.keys(before).filter((id) => id !== 'legacy' && !held.has(id));
  if (missing.length > 0) {
    throw storeErrors.create('api:secrets:key-id-missing', { keyId: missing.join(', '), given: [...held].join(', ') });
  }
  let converted = 0;
  for (;;) {
    const moved = await moveBatch(db, ring, batchSize, 'legacy');
    converted += moved.converted;
    if (moved.converted === 0) break;
  }
  const { rows } = await db.query<Row>(
    `SELECT DISTINCT ON (key_id) ${COLUMNS} FROM mt_secrets WHERE key_id IS NOT NULL ORDER BY key_id, id`,
  );
  for (const row of rows) unwrapDataKey(ring, row.namespace, row.id, row.key_id!, envelopeOf(row).wrappedKey!);
  return { ...(await secretKeyStatus(db, ring)), converted };
}

/** Which master key ids the stored secrets (of every namespace) are under, and which previous keys hold none. */
export async function secretKeyStatus(db: Db, keys: SecretKeys): Promise<wire.SecretKeyStatus> {
  const ring = toKeyring(keys);
  const secretsByKeyId = await countByKeyId(db);
  return {
    currentKeyId: ring.current.id,
    secretsByKeyId,
    unusedPreviousKeyIds: ring.previous.map((key) => key.id).filter((id) => secretsByKeyId[id] === undefined),
  };
}

/**
 * Re-wraps every data key not under the current master key of `keys` (values untouched), `batchSize` rows per
 * transaction: a crash loses at most the batch in flight, and calling it again resumes (rows already under the
 * current key are skipped). A row under a key `keys` lacks stops it with `api:secrets:key-id-missing`.
 */
export async function rotateSecretKeys(
  db: Db,
  keys: SecretKeys,
  options: { batchSize?: number; afterBatch?: (done: SecretKeyRotation) => void | Promise<void> } = {},
): Promise<SecretKeyRotation> {
  const done: SecretKeyRotation = { keyId: toKeyring(keys).current.id, rewrapped: 0, converted: 0, batches: 0 };
  for (const sealed of SEALED_TABLES) {
    for (;;) {
      const rewrapped = await moveSealedBatch(db, keys, options.batchSize ?? 100, sealed);
      if (rewrapped === 0) break;
      done.rewrapped += rewrapped;
      done.batches++;
      await options.afterBatch?.({ ...done });
    }
  }
  for (;;) {
    const moved = await moveBatch(db, keys, options.batchSize ?? 100, 'all');
    if (moved.rewrapped + moved.converted === 0) return done;
    done.rewrapped += moved.rewrapped;
    done.converted += moved.converted;
    done.batches++;
    await options.afterBatch?.({ ...done });
  }
}
