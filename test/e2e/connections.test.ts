import { Maitento } from '@maitento/sdk';
import { createPgDb, type Db, pruneBefore, readConnectionTokens, reserveConnection } from '@maitento/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AuthorizationServer,
  authorize,
  freePort,
  startAuthorizationServer,
  localAsProvider,
} from './helpers/authorization-server.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';
import { runMt } from './support/harness.js';

// Connections per end user (docs/connections.md) against a real authorization server (oidc-provider) and the real
// `mt serve`: a connect link, the person's authorisation driven over HTTP, the callback mt serve hosts; and the
// callbacks it refuses (tampered state, a replayed link, a wrong iss, a link made for another redirect URI), each
// with its code and no connection stored. Tokens never appear in an answer or in the server's log.

let stack: RunsStack;
let as: AuthorizationServer;
let db: Db;
let callbackUrl: string;
const answers: string[] = [];
/** Every token and authorization code issued in the tests, looked for in answers and logs at the end. */
const issued: string[] = [];

async function call(method: string, path: string, body?: unknown) {
  const answer = await stack.api.request(method, path, body);
  answers.push(JSON.stringify(answer.body));
  return answer;
}

/** Opens a callback URL as the person's browser does: no API key. */
async function openCallback(url: URL | string) {
  const code = new URL(url).searchParams.get('code');
  if (code) issued.push(code);
  const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(15_000) });
  const text = await response.text();
  answers.push(text);
  return { status: response.status, text, location: response.headers.get('location') };
}

async function newLink(endUser: string, extra: Record<string, unknown> = {}) {
  const link = await call('POST', '/v1/connections/links', { provider: 'local-as', endUser, ...extra });
  expect(link.status, JSON.stringify(link.body)).toBe(201);
  return link.body as { id: string; url: string; scopes: string[]; expiresAt: string };
}

beforeAll(async () => {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  callbackUrl = `${origin}/v1/connections/callback`;
  as = await startAuthorizationServer({ redirectUri: callbackUrl });
  stack = await startRunsStack({
    deploy: false,
    env: { MT_PUBLIC_URL: origin, MT_LOG_LEVEL: 'debug' },
    serveArgs: ['--port', String(port)],
  });
  expect(stack.servers[0].url).toBe(origin);
  db = createPgDb(stack.env.DATABASE_URL);
  const secret = await call('POST', '/v1/secrets', { name: 'local-as-client-secret', value: as.clientSecret });
  expect(secret.status).toBe(201);
  await stack.api.deploy([localAsProvider(as, { issuer: as.issuer })]);
}, 120_000);

afterAll(async () => {
  await db?.close();
  await stack?.close();
  await as?.close();
});

describe('connections', () => {
  it('shows the deployed auth provider as a versioned resource, its client secret by name only', async () => {
    const provider = await call('GET', '/v1/auth-providers/local-as');
    expect(provider.status).toBe(200);
    expect(provider.body).toMatchObject({
      name: 'local-as',
      version: 1,
      enabled: true,
      resource: { kind: 'auth-provider', issuer: as.issuer, clientSecret: 'local-as-client-secret' },
    });
    const missing = await call('POST', '/v1/connections/links', { provider: 'local-az', endUser: 'alice' });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: 'api:auth-providers:not-found' });
    expect(missing.body.error).toContain('did you mean "local-as"?');
    // A provider whose client secret was deleted after the deploy: refused when the link is asked for, not after the
    // person consented.
    const doomed = await call('POST', '/v1/secrets', { name: 'doomed-secret', value: 'v' });
    expect(doomed.status).toBe(201);
    await stack.api.deploy([
      {
        path: 'auth-providers/no-secret.mtr',
        content: `issuer = "${as.issuer}"\nclientId = "x"\nclientSecret = @ref("doomed-secret")\n`,
      },
    ]);
    expect((await call('DELETE', `/v1/secrets/${doomed.body.id}`)).status).toBe(204);
    const secretless = await call('POST', '/v1/connections/links', { provider: 'no-secret', endUser: 'alice' });
    expect(secretless.status).toBe(422);
    expect(secretless.body).toMatchObject({ code: 'api:connections:client-secret-missing' });
    // A disabled provider version makes no links until it is enabled again.
    expect((await call('POST', '/v1/auth-providers/local-as/versions/1/disable')).body).toMatchObject({
      enabled: false,
    });
    const disabled = await call('POST', '/v1/connections/links', { provider: 'local-as', endUser: 'alice' });
    expect(disabled.status).toBe(409);
    expect(disabled.body).toMatchObject({ code: 'api:auth-providers:version-disabled' });
    expect((await call('POST', '/v1/auth-providers/local-as/versions/1/enable')).body).toMatchObject({ enabled: true });
  });

  it('connects an end user: the link, the authorisation and the callback store one Active connection', async () => {
    const link = await newLink('alice');
    const url = new URL(link.url);
    expect(url.origin).toBe(as.issuer);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('redirect_uri')).toBe(callbackUrl);
    expect(url.searchParams.get('prompt')).toBe('consent');
    const back = await authorize(link.url, 'alice-sub', callbackUrl);
    // RFC 9207: the provider names itself in the response.
    expect(back.searchParams.get('iss')).toBe(as.issuer);
    const opened = await openCallback(back);
    expect(opened.status, opened.text).toBe(200);
    expect(opened.text).toContain('connected');

    const list = await call('GET', '/v1/connections?endUser=alice');
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(1);
    const connection = list.body[0];
    expect(connection).toMatchObject({
      provider: 'local-as',
      endUser: 'alice',
      status: 'Active',
      hasRefreshToken: true,
    });
    expect(connection.scopes).toEqual(expect.arrayContaining(['openid', 'offline_access']));
    expect(Object.keys(connection).sort()).toEqual([
      'accessTokenExpiresAt',
      'createdAt',
      'endUser',
      'hasRefreshToken',
      'id',
      'provider',
      'scopes',
      'status',
      'updatedAt',
    ]);
    // The tokens are the provider's (its introspection knows the access token, for alice's subject).
    const tokens = await readConnectionTokens(
      db,
      Buffer.from(stack.env.MT_SECRET_KEY, 'hex'),
      'default',
      connection.id,
    );
    const accessToken = await as.provider.AccessToken.find(tokens?.accessToken ?? '');
    expect(accessToken?.accountId).toBe('alice-sub');

    // The same callback again: the link was used.
    const replay = await openCallback(back);
    expect(replay.status).toBe(400);
    expect(JSON.parse(replay.text)).toMatchObject({ code: 'api:connections:link-used' });
    expect((await call('GET', `/v1/connections/${connection.id}`)).body.updatedAt).toBe(connection.updatedAt);
  }, 60_000);

  it('refuses a tampered state, a wrong iss and a link made for another redirect URI, storing nothing', async () => {
    const link = await newLink('bob');
    const back = await authorize(link.url, 'bob-sub', callbackUrl);

    const tampered = new URL(back);
    tampered.searchParams.set('state', `${back.searchParams.get('state')}x`);
    const refusedState = await openCallback(tampered);
    expect(refusedState.status).toBe(400);
    expect(JSON.parse(refusedState.text)).toMatchObject({ code: 'api:connections:link-unknown' });
    const noState = await openCallback(callbackUrl);
    expect(JSON.parse(noState.text)).toMatchObject({ code: 'api:connections:link-unknown' });

    // A response naming another issuer (a mix-up): refused by RFC 9207's check; the link is used up with it.
    const mixedUp = new URL(back);
    mixedUp.searchParams.set('iss', 'https://attacker.example');
    const refusedIss = await openCallback(mixedUp);
    expect(refusedIss.status).toBe(400);
    expect(JSON.parse(refusedIss.text)).toMatchObject({ code: 'api:connections:issuer-mismatch' });
    expect(JSON.parse((await openCallback(back)).text)).toMatchObject({ code: 'api:connections:link-used' });

    // A link made while MT_PUBLIC_URL was another address: its redirect URI is not this server's.
    const other = await newLink('bob');
    await db.query(
      "UPDATE mt_connect_links SET redirect_uri = 'https://old.example/v1/connections/callback' WHERE id = $1",
      [other.id],
    );
    const otherBack = await authorize(other.url, 'bob-sub', callbackUrl);
    const refusedRedirect = await openCallback(otherBack);
    expect(refusedRedirect.status).toBe(400);
    expect(JSON.parse(refusedRedirect.text)).toMatchObject({ code: 'api:connections:redirect-mismatch' });

    // The code of a refused callback cannot be used without the PKCE verifier Maitento kept.
    const token = await fetch(`${as.issuer}/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${as.clientId}:${as.clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: otherBack.searchParams.get('code') ?? '',
        redirect_uri: callbackUrl,
      }),
    });
    expect(token.status).toBe(400);

    expect((await call('GET', '/v1/connections?endUser=bob')).body).toEqual([]);
  }, 60_000);

  it('expires a link, keeps two end users apart, redirects to the return URL and deletes a connection', async () => {
    const expired = await newLink('carol');
    await db.query("UPDATE mt_connect_links SET expires_at = now() - interval '1 second' WHERE id = $1", [expired.id]);
    const late = await openCallback(await authorize(expired.url, 'carol-sub', callbackUrl));
    expect(JSON.parse(late.text)).toMatchObject({ code: 'api:connections:link-expired' });
    // A day past its expiry, the retention pass deletes it (the other links stay).
    await db.query("UPDATE mt_connect_links SET expires_at = now() - interval '25 hours' WHERE id = $1", [expired.id]);
    const before = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM mt_connect_links')).rows[0]!.n;
    expect((await pruneBefore(db, null)).connectLinks).toBe(1);
    expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM mt_connect_links')).rows[0]!.n).toBe(
      before - 1,
    );

    const link = await newLink('carol', { returnUrl: 'https://app.example/settings?tab=accounts' });
    const done = await openCallback(await authorize(link.url, 'carol-sub', callbackUrl));
    expect(done.status).toBe(303);
    const location = new URL(done.location ?? '');
    expect(location.origin + location.pathname).toBe('https://app.example/settings');
    expect(location.searchParams.get('tab')).toBe('accounts');
    const id = location.searchParams.get('connection');

    const all = await call('GET', '/v1/connections');
    expect(all.body.map((c: { endUser: string }) => c.endUser)).toEqual(['alice', 'carol']);
    const key = Buffer.from(stack.env.MT_SECRET_KEY, 'hex');
    const [alice, carol] = await Promise.all(
      all.body.map((c: { id: string }) => readConnectionTokens(db, key, 'default', c.id)),
    );
    expect(alice?.accessToken).not.toBe(carol?.accessToken);
    for (const tokens of [alice, carol]) issued.push(tokens?.accessToken ?? '', tokens?.refreshToken ?? '');
    expect((await as.provider.AccessToken.find(carol?.accessToken ?? ''))?.accountId).toBe('carol-sub');

    expect(await as.provider.RefreshToken.find(carol?.refreshToken ?? '')).toBeDefined();
    const deleted = await call('DELETE', `/v1/connections/${id}`);
    expect(deleted.status).toBe(200);
    // Revoked at the provider (RFC 7009): its refresh token is gone there.
    expect(await as.provider.RefreshToken.find(carol?.refreshToken ?? '')).toBeUndefined();
    expect(deleted.body).toMatchObject({ id, endUser: 'carol' });
    expect((await call('GET', `/v1/connections/${id}`)).body).toMatchObject({ code: 'api:connections:not-found' });
    const audit = await call('GET', '/v1/audit?action=connection');
    expect(audit.body.entries.map((e: { action: string }) => e.action)).toEqual(
      expect.arrayContaining(['connection.link-created', 'connection.connected', 'connection.deleted']),
    );
  }, 60_000);

  it('deletes a connection that never got its first token without asking the provider to revoke one', async () => {
    // A client credentials connection whose first grant never succeeded holds an empty token (store
    // reserveConnection): there is nothing to revoke.
    const key = Buffer.from(stack.env.MT_SECRET_KEY, 'hex');
    const reserved = await reserveConnection(db, key, 'default', { provider: 'local-as', endUser: 'never-granted' });
    const logged = stack.servers[0].log().length;
    const deleted = await call('DELETE', `/v1/connections/${reserved.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ id: reserved.id, endUser: 'never-granted' });
    expect(stack.servers[0].log().slice(logged)).not.toContain('revoking a connection at its provider failed');
  });

  it('makes a link and lists, shows and deletes connections with mt connection-… and the SDK', async () => {
    const env = { MT_API_URL: stack.servers[0].url, MT_API_KEY: stack.adminKey };
    const made = await runMt(['connection-link', 'local-as', '--user', 'dave', '--scope', 'calendar.read'], {
      home: stack.home,
      env,
    });
    expect(made.code, made.stderr).toBe(0);
    const url = made.stdout.trim();
    expect(new URL(url).searchParams.get('scope')).toBe('openid offline_access calendar.read');
    const done = await openCallback(await authorize(url, 'dave-sub', callbackUrl));
    expect(done.status, done.text).toBe(200);

    const mt = new Maitento({ baseUrl: stack.servers[0].url, apiKey: stack.adminKey });
    const [dave] = await mt.connections.list({ endUser: 'dave' });
    expect(dave).toMatchObject({ provider: 'local-as', status: 'Active' });
    expect(dave?.scopes).toContain('calendar.read');
    const tokens = await readConnectionTokens(db, Buffer.from(stack.env.MT_SECRET_KEY, 'hex'), 'default', dave!.id);
    issued.push(tokens?.accessToken ?? '', tokens?.refreshToken ?? '');

    const listed = await runMt(['connection-list', '--user', 'dave'], { home: stack.home, env });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(dave!.id);
    const shown = await runMt(['connection-get', dave!.id, '--json'], { home: stack.home, env });
    expect(JSON.parse(shown.stdout)).toEqual(dave);
    answers.push(made.stdout, made.stderr, listed.stdout, shown.stdout);
    const providers = await runMt(['auth-provider-list', '--json'], { home: stack.home, env });
    expect(JSON.parse(providers.stdout)).toEqual([
      { name: 'local-as', latestVersion: 1, enabled: true },
      { name: 'no-secret', latestVersion: 1, enabled: true },
    ]);

    const deleted = await runMt(['connection-delete', dave!.id], { home: stack.home, env });
    expect(deleted.code, deleted.stderr).toBe(0);
    const again = await runMt(['connection-get', dave!.id], { home: stack.home, env });
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('api:connections:not-found');
    await expect(mt.connections.get(dave!.id)).rejects.toMatchObject({ status: 404 });
  }, 60_000);

  it('never shows a token, an authorization code or the client secret in an answer or the log', async () => {
    const secrets = [as.clientSecret, ...issued];
    // The client secret, two access and two refresh tokens, and the codes of five callbacks.
    expect(secrets.filter((s) => s.length >= 20).length).toBeGreaterThanOrEqual(10);
    const seen = [...answers, stack.servers[0].log()].join('\n');
    for (const value of secrets) {
      for (const form of [value, encodeURIComponent(value), Buffer.from(value).toString('base64')]) {
        expect(seen.includes(form), `a token (or the client secret) appears: ${form.slice(0, 6)}…`).toBe(false);
      }
    }
    // Stored sealed: no row holds a token as text.
    const { rows: raw } = await db.query<{ row: string }>(
      'SELECT t::text AS row FROM mt_connections t UNION ALL SELECT l::text FROM mt_connect_links l',
    );
    for (const value of secrets) for (const r of raw) expect(r.row.includes(value)).toBe(false);
  });
});
