import { describe, expect, it } from 'vitest';
import { compile, where } from './helpers.js';

// Connectors with auth = "OAuth2" (docs/mtr-language.md, docs/connections.md): the run's end user's connection at
// the named auth provider is sent as a Bearer token; the provider and the connector's scopes are part of its version.
const provider = `issuer = "https://auth.example.com"
clientId = "maitento"
tokenAuthMethod = "none"
scopes = ["openid"]
`;

const connector = (extra: string) => `method = "GET"
url = "https://api.example.com/me"
description = "The signed-in person's profile."
auth = "OAuth2"
${extra}`;

describe('OAuth2 connectors', () => {
  it('builds the provider and the scopes into the connector', () => {
    const repo = compile({
      'auth-providers/example.mtr': provider,
      'connectors/open-api/me.mtr': connector('provider = @ref("example")\nscopes = ["profile", "read:me"]\n'),
    });
    expect(where(repo.diagnostics)).toEqual([]);
    expect(repo.connectors[0]).toMatchObject({
      auth: 'OAuth2',
      provider: 'example',
      scopes: ['profile', 'read:me'],
    });
  });

  it('a connector without OAuth2 has neither key (its content, and so its version hash, is unchanged)', () => {
    const repo = compile({
      'connectors/open-api/me.mtr': connector('').replace('auth = "OAuth2"', 'auth = "Header"'),
    });
    expect(where(repo.diagnostics)).toEqual([]);
    expect(Object.keys(repo.connectors[0]!)).not.toContain('provider');
    expect(Object.keys(repo.connectors[0]!)).not.toContain('scopes');
  });

  it('needs a provider', () => {
    const repo = compile({ 'connectors/open-api/me.mtr': connector('') });
    expect(where(repo.diagnostics)).toEqual(['connectors/open-api/me.mtr:4:1 mtr:connector:oauth2']);
    expect(repo.diagnostics[0]?.hint).toContain('provider = @ref(');
  });

  it('suggests the auth provider meant for a misspelt one', () => {
    const repo = compile({
      'auth-providers/example.mtr': provider,
      'connectors/open-api/me.mtr': connector('provider = @ref("exampel")\n'),
    });
    expect(where(repo.diagnostics)).toEqual(['connectors/open-api/me.mtr:5:12 mtr:ref:unknown']);
    expect(repo.diagnostics[0]?.hint).toContain('example');
  });

  it('refuses a reference to another kind as the provider', () => {
    const repo = compile({
      'auth-providers/example.mtr': provider,
      'connectors/open-api/me.mtr': connector('provider = @ref("me")\n'),
    });
    expect(repo.diagnostics.map((d) => d.code)).toContain('mtr:ref:wrong-kind');
  });

  it('refuses provider and scopes without auth = "OAuth2"', () => {
    const repo = compile({
      'auth-providers/example.mtr': provider,
      'connectors/open-api/me.mtr': connector('provider = @ref("example")\nscopes = ["x"]\n').replace(
        'auth = "OAuth2"',
        'auth = "None"',
      ),
    });
    expect(where(repo.diagnostics)).toEqual([
      'connectors/open-api/me.mtr:5:1 mtr:connector:oauth2',
      'connectors/open-api/me.mtr:6:1 mtr:connector:oauth2',
    ]);
  });

  it('takes the client credentials grant, only with OAuth2, and suggests the grant meant', () => {
    const repo = compile({
      'auth-providers/example.mtr': provider,
      'connectors/open-api/me.mtr': connector('provider = @ref("example")\ngrant = "client_credentials"\n'),
    });
    expect(where(repo.diagnostics)).toEqual([]);
    expect(repo.connectors[0]).toMatchObject({ provider: 'example', grant: 'client_credentials' });
    const misspelt = compile({
      'auth-providers/example.mtr': provider,
      'connectors/open-api/me.mtr': connector('provider = @ref("example")\ngrant = "client_credential"\n'),
    });
    expect(misspelt.diagnostics[0]?.hint).toBe('did you mean "client_credentials"?');
    const header = compile({
      'connectors/open-api/me.mtr': connector('grant = "client_credentials"\n').replace('"OAuth2"', '"Header"'),
    });
    expect(header.diagnostics.map((d) => d.code)).toEqual(['mtr:connector:oauth2']);
  });

  it('refuses a scope that is not one word', () => {
    const repo = compile({
      'auth-providers/example.mtr': provider,
      'connectors/open-api/me.mtr': connector('provider = @ref("example")\nscopes = ["read me"]\n'),
    });
    expect(repo.diagnostics.map((d) => d.code)).toEqual(['mtr:property:value']);
  });

  it('suggests OAuth2 for a misspelt auth', () => {
    const repo = compile({
      'connectors/open-api/me.mtr': connector('').replace('"OAuth2"', '"Oauth2"'),
    });
    expect(repo.diagnostics[0]?.hint).toBe('did you mean "OAuth2"?');
  });

  it('takes OAuth2 on an MCP connector: provider and scopes as on an HTTP connector, and provider required', () => {
    const repo = compile({
      'auth-providers/example.mtr': provider,
      'connectors/mcp/search.mtr':
        'url = "https://mcp.example.com/mcp"\ntool = "search"\nauth = "OAuth2"\nprovider = @ref("example")\nscopes = ["mcp:tools"]\n',
    });
    expect(where(repo.diagnostics)).toEqual([]);
    expect(repo.connectors[0]).toMatchObject({
      mcp: { url: 'https://mcp.example.com/mcp', tool: 'search' },
      auth: 'OAuth2',
      provider: 'example',
      scopes: ['mcp:tools'],
    });
    const without = compile({
      'connectors/mcp/search.mtr': 'url = "https://mcp.example.com/mcp"\ntool = "search"\nauth = "OAuth2"\n',
    });
    expect(without.diagnostics.map((d) => d.code)).toEqual(['mtr:connector:oauth2']);
    const header = compile({
      'auth-providers/example.mtr': provider,
      'connectors/mcp/search.mtr':
        'url = "https://mcp.example.com/mcp"\ntool = "search"\nauth = "Header"\nprovider = @ref("example")\n',
    });
    expect(header.diagnostics.map((d) => d.code)).toEqual(['mtr:connector:oauth2']);
  });
});
