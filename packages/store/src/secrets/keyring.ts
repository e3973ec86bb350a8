import { createHash } from 'node:crypto';

/** A master key and its id: the first 8 hex digits of the sha256 of `maitento:master-key:` + the key. */
export interface MasterKey {
  id: string;
  key: Buffer;
}

/**
 * The master keys a process holds: `current` (MT_SECRET_KEY) wraps every new data key; `previous`
 * (MT_SECRET_KEY_PREVIOUS) only opens rows not yet re-wrapped by a rotation.
 */
export interface SecretKeyring {
  current: MasterKey;
  previous: MasterKey[];
}

/** A bare master key (as before key ids) or a keyring; every function of the store takes either. */
export type SecretKeys = Buffer | SecretKeyring;

const ids = new WeakMap<Buffer, string>();

/** The id of master key `key`: public, stored beside each wrapped data key and named in errors. */
export function masterKeyId(key: Buffer): string {
  let id = ids.get(key);
  if (id === undefined) {
    // A prefix keeps the id from being the sha256 of the key itself, which some other system might print.
    id = createHash('sha256').update('maitento:master-key:').update(key).digest('hex').slice(0, 8);
    ids.set(key, id);
  }
  return id;
}

/** A keyring of `current` and the `previous` keys (duplicates of the current one dropped). */
export function createKeyring(current: Buffer, previous: Buffer[] = []): SecretKeyring {
  const currentKey = { id: masterKeyId(current), key: current };
  const seen = new Set([currentKey.id]);
  const older: MasterKey[] = [];
  for (const key of previous) {
    const id = masterKeyId(key);
    if (seen.has(id)) continue;
    seen.add(id);
    older.push({ id, key });
  }
  return { current: currentKey, previous: older };
}

const wrapped = new WeakMap<Buffer, SecretKeyring>();

/** `keys` as a keyring (a bare key is a keyring of one). */
export function toKeyring(keys: SecretKeys): SecretKeyring {
  if (!Buffer.isBuffer(keys)) return keys;
  let ring = wrapped.get(keys);
  if (ring === undefined) {
    ring = createKeyring(keys);
    wrapped.set(keys, ring);
  }
  return ring;
}

/** The key new values are sealed under. */
export function currentKey(keys: SecretKeys): Buffer {
  return Buffer.isBuffer(keys) ? keys : keys.current.key;
}

/** Every key of `keys`, the current one first. */
export function allKeys(keys: SecretKeys): MasterKey[] {
  const ring = toKeyring(keys);
  return [ring.current, ...ring.previous];
}

/** The key of `keys` with id `id`, if it holds one. */
export function keyById(keys: SecretKeys, id: string): MasterKey | undefined {
  return allKeys(keys).find((key) => key.id === id);
}
