import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { issuePlatformToken, PLATFORM_TOKEN_TTL_MS, verifyPlatformToken } from './platform-tokens.js';

const key = randomBytes(32);

describe('platform tokens', () => {
  it('speak for their namespace with the user role until they expire', () => {
    const now = Date.now();
    const token = issuePlatformToken(key, 'team-a', now);
    expect(token.startsWith('mtp_')).toBe(true);
    expect(verifyPlatformToken(key, token, now + 1_000)).toEqual({
      keyId: 'platform-token',
      namespace: 'team-a',
      role: 'user',
    });
    expect(verifyPlatformToken(key, token, now + PLATFORM_TOKEN_TTL_MS)).toBeUndefined();
  });

  it('are refused when signed under another key, changed, or malformed', () => {
    const token = issuePlatformToken(key, 'team-a');
    expect(verifyPlatformToken(randomBytes(32), token)).toBeUndefined();
    const [body, signature] = token.slice(4).split('.');
    const otherBody = Buffer.from(JSON.stringify({ ns: 'default', exp: Date.now() + 60_000 })).toString('base64url');
    expect(verifyPlatformToken(key, `mtp_${otherBody}.${signature}`)).toBeUndefined();
    for (const bad of ['mtp_', `mtp_${body}`, `mtp_${body}.${signature}.x`, `mtp_${body}.AAAA`, 'mt_not-a-token']) {
      expect(verifyPlatformToken(key, bad), bad).toBeUndefined();
    }
  });
});
