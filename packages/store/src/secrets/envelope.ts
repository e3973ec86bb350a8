import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { storeErrors } from '../errors.js';
import { allKeys, keyById, type MasterKey, type SecretKeys } from './keyring.js';
import { type Sealed, unseal } from './cipher.js';

/** A secret as stored: its value under its own data key, and that data key wrapped by a master key. */
export interface Envelope extends Sealed {
  /** The id of the master key `wrappedKey` is under; null for a row stored before envelopes (legacy). */
  keyId: string | null;
  /** IV (12 bytes) + the data key under AES-256-GCM (32) + tag (16); null for a legacy row. */
  wrappedKey: Buffer | null;
}

const IV = 12;
const TAG = 16;

// The value's AAD binds namespace and id: a value copied to another row does not open with that row's data key
// (nor with its own, since its wrapped key is bound the same way).
function valueAad(namespace: string, id: string): Buffer {
  return Buffer.from(`maitento:secret-value:v2:${namespace}:${id}`, 'utf8');
}

// The wrapped key's AAD binds namespace, id and master key id: a wrapped key moved to another row, or a
// key_id changed in place, does not unwrap.
function wrapAad(namespace: string, id: string, keyId: string): Buffer {
  return Buffer.from(`maitento:secret-data-key:v2:${namespace}:${id}:${keyId}`, 'utf8');
}

function gcmSeal(key: Buffer, aad: Buffer, plain: Buffer): Sealed {
  const iv = randomBytes(IV);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plain), cipher.final()]);
  return { iv, ciphertext, tag: cipher.getAuthTag() };
}

function gcmOpen(key: Buffer, aad: Buffer, sealed: Sealed): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.iv);
  decipher.setAAD(aad);
  decipher.setAuthTag(sealed.tag);
  return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]);
}

/** Wraps `dataKey` for secret `id` of `namespace` under `master`. */
export function wrapDataKey(master: MasterKey, namespace: string, id: string, dataKey: Buffer): Buffer {
  const sealed = gcmSeal(master.key, wrapAad(namespace, id, master.id), dataKey);
  return Buffer.concat([sealed.iv, sealed.ciphertext, sealed.tag]);
}

function failed(id: string, reason: string): Error {
  return storeErrors.create('api:secrets:decrypt-failed', { id, reason });
}

/**
 * Unwraps the data key of secret `id` (under master key `keyId`); refuses with `api:secrets:key-id-missing` when
 * `keys` lacks that key, `api:secrets:decrypt-failed` when the wrapped key was changed or moved.
 */
export function unwrapDataKey(keys: SecretKeys, namespace: string, id: string, keyId: string, wrapped: Buffer): Buffer {
  const master = keyById(keys, keyId);
  if (master === undefined) {
    throw storeErrors.create('api:secrets:key-id-missing', {
      keyId,
      given: allKeys(keys)
        .map((key) => key.id)
        .join(', '),
    });
  }
  if (wrapped.length !== IV + 32 + TAG) throw failed(id, 'its wrapped data key has the wrong length');
  try {
    return gcmOpen(master.key, wrapAad(namespace, id, keyId), {
      iv: wrapped.subarray(0, IV),
      ciphertext: wrapped.subarray(IV, wrapped.length - TAG),
      tag: wrapped.subarray(wrapped.length - TAG),
    });
  } catch {
    throw failed(id, `its data key does not unwrap with master key ${keyId} (changed, or moved from another row)`);
  }
}

/** Seals `value` for secret `id` of `namespace`: a fresh data key, wrapped under `master`. */
export function sealSecret(master: MasterKey, namespace: string, id: string, value: string): Envelope {
  const dataKey = randomBytes(32);
  const sealed = gcmSeal(dataKey, valueAad(namespace, id), Buffer.from(value, 'utf8'));
  return { ...sealed, keyId: master.id, wrappedKey: wrapDataKey(master, namespace, id, dataKey) };
}

/**
 * Opens a stored secret with whichever key of `keys` it is under; a legacy row (sealed straight under a master
 * key, before envelopes) is tried with every key. Fails loudly, with a code and never the value.
 */
export function openSecret(keys: SecretKeys, namespace: string, id: string, row: Envelope): string {
  if (row.keyId === null || row.wrappedKey === null) {
    for (const master of allKeys(keys)) {
      try {
        return unseal(master.key, namespace, id, row);
      } catch {
        // The next key.
      }
    }
    throw failed(id, 'it was stored before master key ids and opens with none of the keys given');
  }
  const dataKey = unwrapDataKey(keys, namespace, id, row.keyId, row.wrappedKey);
  try {
    return gcmOpen(dataKey, valueAad(namespace, id), row).toString('utf8');
  } catch {
    throw failed(id, 'its stored value was changed, or moved from another row');
  }
}
