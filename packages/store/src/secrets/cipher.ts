import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** One encrypted value: AES-256-GCM ciphertext, its random 12-byte IV and its authentication tag. */
export interface Sealed {
  iv: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

// Binding the ciphertext to its namespace and id means a row copied elsewhere does not decrypt.
function aad(namespace: string, id: string): Buffer {
  return Buffer.from(`maitento:secret:${namespace}:${id}`, 'utf8');
}

/** Encrypts `value` under `key` with a fresh IV, the namespace and secret id as additional data. */
export function seal(key: Buffer, namespace: string, id: string, value: string): Sealed {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad(namespace, id));
  const ciphertext = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return { iv, ciphertext, tag: cipher.getAuthTag() };
}

/** Decrypts a value sealed by {@link seal}; throws when the key, namespace, id or bytes differ. */
export function unseal(key: Buffer, namespace: string, id: string, sealed: Sealed): string {
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.iv);
  decipher.setAAD(aad(namespace, id));
  decipher.setAuthTag(sealed.tag);
  return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString('utf8');
}
