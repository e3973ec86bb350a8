import { readFileSync } from 'node:fs';
import { createEgressPolicy } from '@maitento/egress/static';
import { describeProperty, fileShape, shapeAt } from '@maitento/lang';
import { describe, expect, it } from 'vitest';
import { compile, where } from './helpers.js';

// Auth providers (`auth-providers/<name>.mtr`, docs/connections.md): OAuth 2 authorization servers end users
// connect their accounts at, checked by mt check like every resource.
const github = `authorizationUrl = "https://github.com/login/oauth/authorize"
tokenUrl = "https://github.com/login/oauth/access_token"
clientId = "Iv1.0123456789abcdef"
clientSecret = @ref("github-client-secret")
scopes = ["repo", "read:user"]
`;

const google = `issuer = "https://accounts.google.com"
clientId = "1234.apps.googleusercontent.com"
clientSecret = @ref("google-client-secret")
tokenAuthMethod = "client_secret_post"
scopes = ["openid", "email", "https://www.googleapis.com/auth/calendar.readonly"]
authorizationParams = { access_type = "offline" prompt = "consent" }
`;

describe('auth providers', () => {
  it('builds a provider with explicit endpoints and one with an issuer, with their defaults', () => {
    const repo = compile({ 'auth-providers/github.mtr': github, 'auth-providers/google.mtr': google });
    expect(where(repo.diagnostics)).toEqual([]);
    expect(repo.authProviders).toEqual([
      {
        kind: 'auth-provider',
        name: 'github',
        clientId: 'Iv1.0123456789abcdef',
        tokenAuthMethod: 'client_secret_basic',
        scopes: ['repo', 'read:user'],
        authorizationParams: {},
        refresh: true,
        authorizationUrl: 'https://github.com/login/oauth/authorize',
        tokenUrl: 'https://github.com/login/oauth/access_token',
        clientSecret: 'github-client-secret',
      },
      {
        kind: 'auth-provider',
        name: 'google',
        clientId: '1234.apps.googleusercontent.com',
        tokenAuthMethod: 'client_secret_post',
        scopes: ['openid', 'email', 'https://www.googleapis.com/auth/calendar.readonly'],
        authorizationParams: { access_type: 'offline', prompt: 'consent' },
        refresh: true,
        issuer: 'https://accounts.google.com',
        clientSecret: 'google-client-secret',
      },
    ]);
    expect(repo.sources).toContainEqual({ kind: 'auth-provider', name: 'github', file: 'auth-providers/github.mtr' });
  });

  it('suggests the property meant for a misspelt one', () => {
    const repo = compile({ 'auth-providers/google.mtr': google.replace('tokenAuthMethod', 'tokenAuthMethd') });
    const diagnostic = repo.diagnostics.find((d) => d.code === 'mtr:property:unknown');
    expect(diagnostic?.hint).toContain('tokenAuthMethod');
  });

  it('refuses an unknown token endpoint method with the values it may have', () => {
    const repo = compile({
      'auth-providers/google.mtr': google.replace('"client_secret_post"', '"client_secret_jwt"'),
    });
    expect(where(repo.diagnostics)).toEqual(['auth-providers/google.mtr:4:19 mtr:property:value']);
    expect(repo.diagnostics[0]?.message).toContain('"client_secret_basic", "client_secret_post", "none"');
    expect(repo.diagnostics[0]?.hint).toBe('did you mean "client_secret_post"?');
  });

  it('needs an issuer or both endpoints, not both kinds', () => {
    expect(
      where(compile({ 'auth-providers/p.mtr': 'clientId = "c"\ntokenAuthMethod = "none"\n' }).diagnostics),
    ).toEqual(['auth-providers/p.mtr:1:1 mtr:auth-provider:endpoints']);
    const partial = compile({ 'auth-providers/p.mtr': github.replace(/tokenUrl = .*\n/, '') });
    expect(where(partial.diagnostics)).toEqual(['auth-providers/p.mtr:1:1 mtr:auth-provider:endpoints']);
    expect(partial.diagnostics[0]?.message).toContain('tokenUrl');
    const both = compile({ 'auth-providers/p.mtr': `issuer = "https://accounts.google.com"\n${github}` });
    expect(where(both.diagnostics)).toEqual([
      'auth-providers/p.mtr:2:20 mtr:auth-provider:endpoints',
      'auth-providers/p.mtr:3:12 mtr:auth-provider:endpoints',
    ]);
  });

  it('takes a protected resource (an MCP server) instead of an issuer, with the checks of a URL', () => {
    const mcp = `resource = "https://mcp.example.com/mcp"\nclientId = "c"\ntokenAuthMethod = "none"\n`;
    const repo = compile({ 'auth-providers/p.mtr': mcp });
    expect(where(repo.diagnostics)).toEqual([]);
    expect(repo.authProviders[0]).toMatchObject({ resource: 'https://mcp.example.com/mcp' });
    expect(repo.authProviders[0]).not.toHaveProperty('issuer');
    const both = compile({ 'auth-providers/p.mtr': `issuer = "https://accounts.google.com"\n${mcp}` });
    expect(where(both.diagnostics)).toEqual(['auth-providers/p.mtr:2:12 mtr:auth-provider:endpoints']);
    const fragment = compile({ 'auth-providers/p.mtr': mcp.replace('/mcp"', '/mcp#x"') });
    expect(where(fragment.diagnostics)).toEqual(['auth-providers/p.mtr:1:12 mtr:auth-provider:url']);
    const local = compile({ 'auth-providers/p.mtr': mcp.replace('https://mcp.example.com', 'http://127.0.0.1:4000') });
    expect(where(local.diagnostics)).toEqual(['auth-providers/p.mtr:1:12 api:connectors:address-blocked']);
  });

  it('refuses an issuer with a query, a URL that is not http(s), and a private address unless allowed', () => {
    const query = compile({
      'auth-providers/p.mtr': google.replace('accounts.google.com', 'accounts.google.com/?x=1'),
    });
    expect(where(query.diagnostics)).toEqual(['auth-providers/p.mtr:1:10 mtr:auth-provider:url']);
    const ftp = compile({
      'auth-providers/p.mtr': github.replace('https://github.com/login/oauth/access_token', 'ftp://x'),
    });
    expect(where(ftp.diagnostics)).toEqual(['auth-providers/p.mtr:2:12 mtr:auth-provider:url']);
    const local = google.replace('https://accounts.google.com', 'http://127.0.0.1:4000');
    expect(where(compile({ 'auth-providers/p.mtr': local }).diagnostics)).toEqual([
      'auth-providers/p.mtr:1:10 api:connectors:address-blocked',
    ]);
    const allowed = compile({ 'auth-providers/p.mtr': local }, { egress: createEgressPolicy({ allow: '127.0.0.1' }) });
    expect(where(allowed.diagnostics)).toEqual([]);
    const plain = compile({ 'auth-providers/p.mtr': google.replace('https://', 'http://') });
    expect(where(plain.diagnostics)).toEqual(['auth-providers/p.mtr:1:10 mtr:auth-provider:url']);
    expect(plain.diagnostics[0]?.message).toContain('use https://');
  });

  it('asks for a client secret exactly when the token endpoint method sends one', () => {
    const missing = compile({ 'auth-providers/p.mtr': github.replace(/clientSecret = .*\n/, '') });
    expect(where(missing.diagnostics)).toEqual(['auth-providers/p.mtr:3:12 mtr:auth-provider:client-secret']);
    const publicClient = compile({ 'auth-providers/p.mtr': `${github}tokenAuthMethod = "none"\n` });
    expect(where(publicClient.diagnostics)).toEqual(['auth-providers/p.mtr:4:16 mtr:auth-provider:client-secret']);
    const none = compile({
      'auth-providers/p.mtr': `${github.replace(/clientSecret = .*\n/, '')}tokenAuthMethod = "none"\nrefresh = false\n`,
    });
    expect(where(none.diagnostics)).toEqual([]);
    expect(none.authProviders[0]).toMatchObject({ tokenAuthMethod: 'none', refresh: false });
  });

  it('takes no client id where a client can be registered (an issuer or a resource), and no secret with it', () => {
    const registered = compile({ 'auth-providers/p.mtr': 'resource = "https://mcp.example.com/mcp"\n' });
    expect(where(registered.diagnostics)).toEqual([]);
    expect(registered.authProviders[0]).not.toHaveProperty('clientId');
    const issuer = compile({ 'auth-providers/p.mtr': 'issuer = "https://accounts.example.com"\n' });
    expect(where(issuer.diagnostics)).toEqual([]);
    // Explicit endpoints name no server to register at.
    const endpoints = compile({ 'auth-providers/p.mtr': github.replace(/client(Id|Secret) = .*\n/g, '') });
    expect(where(endpoints.diagnostics)).toEqual(['auth-providers/p.mtr:1:20 mtr:auth-provider:client-secret']);
    expect(endpoints.diagnostics[0]?.message).toContain('no clientId');
    // A registered client's secret comes from the registration.
    const secret = compile({
      'auth-providers/p.mtr': 'issuer = "https://accounts.example.com"\nclientSecret = @ref("s")\n',
    });
    expect(where(secret.diagnostics)).toEqual(['auth-providers/p.mtr:2:16 mtr:auth-provider:client-secret']);
  });

  it('checks the client secret against the namespace secrets at deploy, with a did-you-mean', () => {
    const repo = compile({ 'auth-providers/github.mtr': github }, { knownSecrets: ['github-client-secrets'] });
    expect(where(repo.diagnostics)).toEqual(['auth-providers/github.mtr:4:16 api:secrets:not-found']);
    expect(repo.diagnostics[0]?.hint).toContain('github-client-secrets');
  });

  it('refuses a scope with a space and PKCE settings (always S256)', () => {
    const repo = compile({ 'auth-providers/p.mtr': `${github.replace('"repo"', '"repo user"')}pkce = false\n` });
    expect(where(repo.diagnostics).map((d) => d.split(' ')[1])).toEqual(['mtr:property:value', 'mtr:property:unknown']);
    expect(repo.diagnostics[1]?.hint).toBe('PKCE (S256) is always used for the authorization code flow; remove pkce');
  });

  it('gives editors the shape of an auth provider file: its properties, their values and what they are for', () => {
    const shape = fileShape('auth-providers/github.mtr');
    expect(shape).toMatchObject({ type: 'object', name: 'an auth provider' });
    const method = shape && shapeAt(shape, ['tokenAuthMethod']);
    expect(method?.property && describeProperty('tokenAuthMethod', method.property)).toContain('client_secret_post');
    const secret = shape && shapeAt(shape, ['clientSecret']);
    expect(secret?.shape).toEqual({ type: 'ref', kind: 'secret' });
  });

  it('compiles the provider files of docs/connections.md as written', () => {
    const doc = readFileSync(new URL('../../../../docs/connections.md', import.meta.url), 'utf8');
    const files = [...doc.matchAll(/^File: (\S+)\n```mtr\n([\s\S]*?)^```$/gm)].map((m) => [m[1], m[2]] as const);
    expect(files.map(([path]) => path)).toEqual([
      'auth-providers/github.mtr',
      'auth-providers/google.mtr',
      'auth-providers/microsoft.mtr',
      'auth-providers/slack.mtr',
    ]);
    const repo = compile(Object.fromEntries(files));
    expect(repo.diagnostics).toEqual([]);
    expect(repo.authProviders.map((p) => p.issuer ?? p.tokenUrl)).toEqual([
      'https://github.com/login/oauth/access_token',
      'https://accounts.google.com',
      'https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0',
      'https://slack.com',
    ]);
  });
});
