import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { storeErrors } from '../errors.js';

/** Decodes `MT_SECRET_KEY`: 32 bytes written as 64 hex digits or as base64. */
export function parseSecretKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) throw storeErrors.create('api:secrets:key-invalid', { length: key.length });
  return key;
}

/** The secret key to use and, when it was made up, a warning to show. */
export interface ResolvedSecretKey {
  key: Buffer;
  /** Where it came from: the environment, an existing key file, or a key file just generated. */
  source: 'env' | 'file' | 'generated';
  warning?: string;
}

/**
 * Finds the key secrets are encrypted under: `value` (MT_SECRET_KEY) when set; else, for PGlite
 * (`dataDir` given), `secret.key` in the data folder, generated with mode 0600 on first start; else
 * (a PostgreSQL server) refuses with `api:secrets:key-missing`.
 */
export function resolveSecretKey(options: { value?: string; dataDir?: string }): ResolvedSecretKey {
  if (options.value !== undefined && options.value !== '') return { key: parseSecretKey(options.value), source: 'env' };
  if (options.dataDir === undefined) throw storeErrors.create('api:secrets:key-missing');
  const file = join(options.dataDir, 'secret.key');
  if (existsSync(file)) return { key: parseSecretKey(readFileSync(file, 'utf8')), source: 'file' };
  mkdirSync(options.dataDir, { recursive: true });
  writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return {
    key: parseSecretKey(readFileSync(file, 'utf8')),
    source: 'generated',
    warning:
      `MT_SECRET_KEY is not set: generated a secret key in ${file} (mode 0600). ` +
      'Back it up with the data folder; without it the stored secrets cannot be decrypted.',
  };
}
