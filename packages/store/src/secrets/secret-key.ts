import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { storeErrors } from '../errors.js';
import { createKeyring, type SecretKeyring } from './keyring.js';

/** Decodes a master key (`MT_SECRET_KEY`, or the `variable` named): 32 bytes written as 64 hex digits or as base64. */
export function parseSecretKey(text: string, variable = 'MT_SECRET_KEY'): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) throw storeErrors.create('api:secrets:key-invalid', { variable, length: key.length });
  return key;
}

/** The secret key to use and, when it was made up, a warning to show. */
export interface ResolvedSecretKey {
  /** The current master key. */
  key: Buffer;
  /** The current key and the previous ones (`MT_SECRET_KEY_PREVIOUS`), with their ids. */
  keyring: SecretKeyring;
  /** Where it came from: the environment, an existing key file, or a key file just generated. */
  source: 'env' | 'file' | 'generated';
  warning?: string;
}

function withPrevious(key: Buffer, previous: string | undefined): SecretKeyring {
  const older = (previous ?? '')
    .split(',')
    .map((text) => text.trim())
    .filter((text) => text !== '')
    .map((text) => parseSecretKey(text, 'MT_SECRET_KEY_PREVIOUS'));
  return createKeyring(key, older);
}

/**
 * Finds the master key secrets are wrapped under: `value` (MT_SECRET_KEY) when set; else, for PGlite
 * (`dataDir` given), `secret.key` in the data folder, generated with mode 0600 on first start; else
 * (a PostgreSQL server) refuses with `api:secrets:key-missing`. `previous` (MT_SECRET_KEY_PREVIOUS, comma-separated)
 * adds the keys a rotation moves away from.
 */
export function resolveSecretKey(options: { value?: string; previous?: string; dataDir?: string }): ResolvedSecretKey {
  if (options.value !== undefined && options.value !== '') {
    const key = parseSecretKey(options.value);
    return { key, keyring: withPrevious(key, options.previous), source: 'env' };
  }
  if (options.dataDir === undefined) throw storeErrors.create('api:secrets:key-missing');
  const file = join(options.dataDir, 'secret.key');
  if (existsSync(file)) {
    const key = parseSecretKey(readFileSync(file, 'utf8'));
    return { key, keyring: withPrevious(key, options.previous), source: 'file' };
  }
  mkdirSync(options.dataDir, { recursive: true });
  writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  const key = parseSecretKey(readFileSync(file, 'utf8'));
  return {
    key,
    keyring: withPrevious(key, options.previous),
    source: 'generated',
    warning:
      `MT_SECRET_KEY is not set: generated a secret key in ${file} (mode 0600). ` +
      'Back it up with the data folder; without it the stored secrets cannot be decrypted.',
  };
}
