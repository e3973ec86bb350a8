import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { allKeys, currentKey, type SecretKeys } from '../secrets/keyring.js';
import type { KeyIdentity } from './keys.js';

const PREFIX = 'mtp_';

/** How long a platform token is accepted after it is issued. */
export const PLATFORM_TOKEN_TTL_MS = 5 * 60_000;

// The signing key is derived from the secret key (never the secret key itself), for this one purpose.
const derived = new WeakMap<Buffer, Buffer>();
function signingKey(secretKey: Buffer): Buffer {
  let key = derived.get(secretKey);
  if (key === undefined) {
    key = Buffer.from(hkdfSync('sha256', secretKey, Buffer.alloc(0), 'maitento:platform-token:v1', 32));
    derived.set(secretKey, key);
  }
  return key;
}

function sign(secretKey: Buffer, body: string): Buffer {
  return createHmac('sha256', signingKey(secretKey)).update(`${PREFIX}${body}`).digest();
}

/**
 * Issues a short-lived platform token for `namespace`: what a connector with `auth = "Maitento"` sends to the
 * platform's own API. It carries the `user` role (reads) and expires after {@link PLATFORM_TOKEN_TTL_MS}.
 */
export function issuePlatformToken(secretKey: SecretKeys, namespace: string, now = Date.now()): string {
  const body = Buffer.from(JSON.stringify({ ns: namespace, exp: now + PLATFORM_TOKEN_TTL_MS })).toString('base64url');
  return `${PREFIX}${body}.${sign(currentKey(secretKey), body).toString('base64url')}`;
}

/** True when `token` has the shape of a platform token (so it is not looked up as an API key). */
export function isPlatformToken(token: string): boolean {
  return token.startsWith(PREFIX);
}

/**
 * Returns who a platform token speaks for, or undefined when it is forged, malformed or expired. A token signed
 * under a previous master key still counts (during a rotation another server may hold only that one).
 */
export function verifyPlatformToken(secretKey: SecretKeys, token: string, now = Date.now()): KeyIdentity | undefined {
  if (!isPlatformToken(token)) return undefined;
  const [body, signature, extra] = token.slice(PREFIX.length).split('.');
  if (!body || !signature || extra !== undefined) return undefined;
  const given = Buffer.from(signature, 'base64url');
  const signed = allKeys(secretKey).some(({ key }) => {
    const expected = sign(key, body);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!signed) return undefined;
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const { ns, exp } = (payload ?? {}) as { ns?: unknown; exp?: unknown };
  if (typeof ns !== 'string' || typeof exp !== 'number' || exp <= now) return undefined;
  return { keyId: 'platform-token', namespace: ns, role: 'user' };
}
