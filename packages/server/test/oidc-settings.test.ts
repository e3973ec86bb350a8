// Single sign-on's settings and role mapping (docs/sso.md): MT_OIDC_* read from the environment as `mt serve` reads
// them, a setting that cannot work refused with `api:server:oidc-invalid`, and claim values mapped to the most capable
// role per namespace. The sign-in itself is tested against a real provider in test/e2e/console/sso.test.ts.
import { isMtError } from '@maitento/errors';
import { afterEach, describe, expect, it } from 'vitest';
import { claimValues, mappedRoles } from '../src/console/oidc.js';
import { oidcSettingsFromEnv } from '../src/server/settings.js';

const NAMES = [
  'MT_OIDC_ISSUER',
  'MT_OIDC_CLIENT_ID',
  'MT_OIDC_CLIENT_SECRET',
  'MT_OIDC_SCOPES',
  'MT_OIDC_ROLES_CLAIM',
  'MT_OIDC_ROLES',
  'MT_OIDC_PROVIDER_NAME',
  'MT_OIDC_SESSION_SECONDS',
] as const;
const saved = Object.fromEntries(NAMES.map((n) => [n, process.env[n]]));

afterEach(() => {
  for (const name of NAMES) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

function set(env: Partial<Record<(typeof NAMES)[number], string>>) {
  for (const name of NAMES) delete process.env[name];
  Object.assign(process.env, env);
}

const ROLES = JSON.stringify({ leads: { default: 'approver' }, ops: { default: 'admin', billing: 'user' } });

function refusal(publicUrl: string | undefined): string {
  try {
    oidcSettingsFromEnv(publicUrl);
  } catch (error) {
    if (isMtError(error)) {
      expect(error.code).toBe('api:server:oidc-invalid');
      return error.message;
    }
    throw error;
  }
  throw new Error('not refused');
}

describe('MT_OIDC_* settings', () => {
  it('are off without MT_OIDC_ISSUER', () => {
    set({ MT_OIDC_CLIENT_ID: 'c', MT_OIDC_ROLES: ROLES });
    expect(oidcSettingsFromEnv('https://mt.example.com')).toBeUndefined();
  });

  it('derive the redirect and post-logout addresses from MT_PUBLIC_URL, with their defaults', () => {
    set({ MT_OIDC_ISSUER: 'https://id.example.com/realms/staff', MT_OIDC_CLIENT_ID: 'console', MT_OIDC_ROLES: ROLES });
    expect(oidcSettingsFromEnv('https://mt.example.com/')).toMatchObject({
      clientId: 'console',
      redirectUri: 'https://mt.example.com/console/login/oidc/callback',
      postLogoutRedirectUri: 'https://mt.example.com/console/login',
      scopes: 'openid profile email',
      rolesClaim: 'groups',
      providerName: 'id.example.com',
      sessionMs: 12 * 3600 * 1000,
      roles: { leads: { default: 'approver' }, ops: { default: 'admin', billing: 'user' } },
    });
  });

  it('refuse what cannot work, naming the setting', () => {
    set({ MT_OIDC_ISSUER: 'http://id.example.com', MT_OIDC_CLIENT_ID: 'c', MT_OIDC_ROLES: ROLES });
    expect(refusal('https://mt.example.com')).toContain('must be an https URL');
    set({ MT_OIDC_ISSUER: 'https://id.example.com', MT_OIDC_ROLES: ROLES });
    expect(refusal('https://mt.example.com')).toContain('MT_OIDC_CLIENT_ID is not set');
    set({ MT_OIDC_ISSUER: 'https://id.example.com', MT_OIDC_CLIENT_ID: 'c', MT_OIDC_ROLES: ROLES });
    expect(refusal(undefined)).toContain('MT_PUBLIC_URL is not set');
    set({ MT_OIDC_ISSUER: 'https://id.example.com', MT_OIDC_CLIENT_ID: 'c' });
    expect(refusal('https://mt.example.com')).toContain('MT_OIDC_ROLES is not set');
    set({ MT_OIDC_ISSUER: 'https://id.example.com', MT_OIDC_CLIENT_ID: 'c', MT_OIDC_ROLES: '{"leads":' });
    expect(refusal('https://mt.example.com')).toContain('MT_OIDC_ROLES is not JSON');
    set({
      MT_OIDC_ISSUER: 'https://id.example.com',
      MT_OIDC_CLIENT_ID: 'c',
      MT_OIDC_ROLES: '{"bots":{"default":"runner"}}',
    });
    expect(refusal('https://mt.example.com')).toContain('runner is for programs');
  });

  it('take an http issuer on this machine (a local provider)', () => {
    set({ MT_OIDC_ISSUER: 'http://127.0.0.1:9000', MT_OIDC_CLIENT_ID: 'c', MT_OIDC_ROLES: ROLES });
    expect(oidcSettingsFromEnv('http://127.0.0.1:8080')?.issuer.href).toBe('http://127.0.0.1:9000/');
  });
});

describe('role mapping', () => {
  const roles = JSON.parse(ROLES);

  it('gives the most capable role each namespace is mapped to, and nothing for unmapped values', () => {
    expect(mappedRoles(['leads', 'ops'], roles)).toEqual({ default: 'admin', billing: 'user' });
    expect(mappedRoles(['leads', 'staff'], roles)).toEqual({ default: 'approver' });
    expect(mappedRoles(['staff', '__proto__', 'toString'], roles)).toEqual({});
  });

  it('reads the claim as a string or an array, by a dotted path', () => {
    expect(claimValues({ groups: ['a', 1, 'b'] }, 'groups')).toEqual(['a', 'b']);
    expect(claimValues({ role: 'a' }, 'role')).toEqual(['a']);
    expect(claimValues({ realm_access: { roles: ['x'] } }, 'realm_access.roles')).toEqual(['x']);
    expect(claimValues({}, 'groups')).toEqual([]);
  });
});
