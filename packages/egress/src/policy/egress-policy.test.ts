import { isMtError } from '@maitento/errors';
import { describe, expect, it } from 'vitest';
import { createEgressPolicy, egressPolicyFromEnv, isPlatformAddress, isPlatformHost } from './egress-policy.js';

describe('egressPolicyFromEnv', () => {
  it('allows nothing and knows no platform host when no variable is set', () => {
    const policy = egressPolicyFromEnv({});
    expect(policy.allow.entries).toEqual([]);
    expect(policy.platformHosts).toEqual([]);
  });

  it('reads MT_EGRESS_ALLOW, MT_PLATFORM_HOSTS and the host of MT_PUBLIC_URL', () => {
    const policy = egressPolicyFromEnv({
      MT_EGRESS_ALLOW: '127.0.0.1/32,orders.internal',
      MT_PLATFORM_HOSTS: 'mt-internal.example.com, 10.0.0.5:8080,[fd00::5]:9000',
      MT_PUBLIC_URL: 'https://Maitento.Example.com:8443/api',
    });
    expect(policy.allow.entries).toEqual(['127.0.0.1/32', 'orders.internal']);
    expect(policy.platformHosts).toEqual([
      'mt-internal.example.com',
      '10.0.0.5:8080',
      '[fd00::5]:9000',
      'maitento.example.com:8443',
    ]);
  });

  it('takes every port of the public host when MT_PUBLIC_URL names no port, and only its port otherwise', () => {
    expect(egressPolicyFromEnv({ MT_PUBLIC_URL: 'https://mt.example.com' }).platformHosts).toEqual(['mt.example.com']);
    expect(egressPolicyFromEnv({ MT_PUBLIC_URL: 'http://127.0.0.1:80/' }).platformHosts).toEqual(['127.0.0.1:80']);
  });

  it('refuses a bad allow-list at policy creation with api:egress:invalid-allow-list', () => {
    expect(() => egressPolicyFromEnv({ MT_EGRESS_ALLOW: '10.0.0.0/99' })).toThrow(
      expect.objectContaining({ code: 'api:egress:invalid-allow-list', status: 400 }),
    );
  });

  it('refuses a bad platform host or public URL with api:egress:invalid-platform-host', () => {
    for (const env of [
      { MT_PLATFORM_HOSTS: 'user@mt.example.com' },
      { MT_PUBLIC_URL: 'not a url' },
      { MT_PUBLIC_URL: 'ftp://x.example' },
    ]) {
      let error: unknown;
      try {
        egressPolicyFromEnv(env);
      } catch (e) {
        error = e;
      }
      expect(isMtError(error) && error.code, JSON.stringify(env)).toBe('api:egress:invalid-platform-host');
    }
  });
});

describe('isPlatformHost', () => {
  const policy = createEgressPolicy({ platformHosts: ['mt.example.com:443', '203.0.113.7', '[2606:4700::7]:8080'] });

  it('matches a platform host by name and port, ignoring case and trailing dots', () => {
    expect(isPlatformHost(policy, 'MT.example.com.', 443)).toBe(true);
    expect(isPlatformHost(policy, 'mt.example.com', 8443)).toBe(false);
    expect(isPlatformHost(policy, 'other.example.com', 443)).toBe(false);
  });

  it('matches an address a name resolves to (isPlatformAddress, one answer at a time)', () => {
    expect(isPlatformHost(policy, 'alias.example.com', 1234)).toBe(false);
    expect(isPlatformAddress(policy, '203.0.113.7', 1234)).toBe(true);
    expect(isPlatformAddress(policy, '2606:4700::7', 8080)).toBe(true);
    expect(isPlatformAddress(policy, '2606:4700::7', 8081)).toBe(false);
  });

  it('matches the platform hosts of a policy put together by hand (as the gateway adds its own)', () => {
    const own = Object.freeze({ ...policy, platformHosts: Object.freeze([...policy.platformHosts, '127.0.0.1:9000']) });
    expect(isPlatformAddress(own, '::ffff:7f00:1', 9000)).toBe(true);
    expect(isPlatformAddress(own, '127.0.0.1', 9001)).toBe(false);
    expect(isPlatformHost(own, 'MT.example.com', 443)).toBe(true);
    expect(isPlatformHost(own, '[2606:4700:0::7]', 8080)).toBe(true);
  });
});
