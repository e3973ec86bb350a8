import { createServer, type Server } from 'node:http';
import { createPgDb, type Db, readConnectionTokens } from '@maitento/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AuthorizationServer,
  freePort,
  startAuthorizationServer,
  answerBearer,
} from './helpers/authorization-server.js';
import { api } from './helpers/api.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';

// Client credentials with a client registered dynamically (docs/connections.md, decision 0336): a machine-to-machine
// connector (`grant = "client_credentials"`, no end user) whose auth provider names an issuer and no client id. The
// first call registers Maitento's client at the authorization server (oidc-provider with open registration) with the
// client credentials grant, gets the client's token and keeps it sealed as the connection with no end user (twenty first
// calls at once through two processes ask for it once: the connection is made first, its token expired, and the
// token asked for under its row as a later one is); later calls reuse it; once it expires, fifty calls at once through two `mt serve` processes ask for one new token (more
// than a process's pool of ten, MT_DB_POOL_MAX: a process's calls share one grant, and the other process's wait for
// it trying the row every 100 ms, holding no pooled connection: decision 0380).

/** Seconds a token of the test server lives: more than the 5 s margin a token is renewed within, not much more. */
const TOKEN_TTL = 8;

let stack: RunsStack;
let as: AuthorizationServer;
let db: Db;
let upstream: Server;
let upstreamUrl: string;
/** The grants the token endpoint made, by grant type. */
const grants: string[] = [];
/** The registered client's secret, looked for in the log and answers. */
let clientSecret = '';
/** The tokens the upstream was sent. */
const bearers: string[] = [];

const clientCredentialGrants = () => grants.filter((g) => g === 'client_credentials').length;

beforeAll(async () => {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  // The server's own client is not Maitento's: Maitento registers one.
  as = await startAuthorizationServer({
    redirectUri: `${origin}/unused`,
    registration: true,
    accessTokenTtl: TOKEN_TTL,
  });
  as.provider.on('grant.success', (ctx: { oidc: { params?: { grant_type?: unknown } } }) => {
    grants.push(String(ctx.oidc.params?.grant_type));
  });
  // The upstream accepts a live client credentials token of that server and answers whose client it is.
  upstream = createServer((req, res) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    bearers.push(token);
    answerBearer(res, as.provider.ClientCredentials.find(token), (found) => ({ client: found.clientId }));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
  stack = await startRunsStack({
    servers: 2,
    deploy: false,
    env: { MT_PUBLIC_URL: origin },
    serveArgs: ['--port', String(port)],
  });
  db = createPgDb(stack.env.DATABASE_URL);
  await stack.api.deploy([
    {
      // An issuer and no client id: the client is registered there on first use.
      path: 'auth-providers/registered-as.mtr',
      content: `issuer = "${as.issuer}"\nscopes = ["calendar.read"]\n`,
    },
    {
      path: 'connectors/open-api/fleet.mtr',
      content: `method = "GET"
url = "${upstreamUrl}/fleet"
description = "The company's fleet, for the client itself."
auth = "OAuth2"
provider = @ref("registered-as")
grant = "client_credentials"
`,
    },
    { path: 'external-operations/open-api/fleet.mtr', content: 'connector = @ref("fleet")\nguidance = "Fleet."\n' },
  ]);
}, 120_000);

afterAll(async () => {
  await db?.close();
  await stack?.close();
  await as?.close();
  upstream?.closeAllConnections();
  upstream?.close();
});

async function callFleet(url = stack.servers[0]!.url) {
  const answer = await api(url, stack.adminKey).request('POST', '/v1/extops/fleet/call', { arguments: {} });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body as { ok: boolean; status: number; body: { client?: string } };
}

describe('client credentials with a dynamically registered client', () => {
  it('registers a client with the client credentials grant, gets its token once for twenty first calls at once through two processes, and keeps it', async () => {
    // The first token, like every later one, is asked for under the connection's row: one grant for all.
    const firsts = await Promise.all(Array.from({ length: 20 }, (_, i) => callFleet(stack.servers[i % 2]!.url)));
    expect(as.registered).toHaveLength(1);
    const clientId = as.registered[0]!;
    for (const first of firsts) expect(first).toMatchObject({ ok: true, status: 200, body: { client: clientId } });
    expect(clientCredentialGrants()).toBe(1);
    expect(new Set(bearers).size).toBe(1);
    const client = await as.provider.Client.find(clientId);
    expect(client?.grantTypes).toEqual(expect.arrayContaining(['client_credentials', 'authorization_code']));
    // The stored client: its secret sealed, never in the row's text.
    const { rows } = await db.query<{ client_id: string; sealed: string }>(
      "SELECT client_id, encode(ciphertext, 'escape') AS sealed FROM mt_oauth_clients",
    );
    expect(rows).toEqual([expect.objectContaining({ client_id: clientId })]);
    expect(rows[0]!.sealed.includes(client!.clientSecret!)).toBe(false);
    clientSecret = client!.clientSecret!;
    // The token is kept as the connection with no end user; a second call (other process) uses it.
    const grantsBefore = clientCredentialGrants();
    const second = await callFleet(stack.servers[1]!.url);
    expect(second).toMatchObject({ ok: true, body: { client: clientId } });
    expect(clientCredentialGrants()).toBe(grantsBefore);
    expect(bearers.at(-1)).toBe(bearers.at(-2));
    const [machine] = (await stack.api.request('GET', '/v1/connections?provider=registered-as')).body;
    expect(machine).toMatchObject({ endUser: '', status: 'Active', hasRefreshToken: false });
    const tokens = await readConnectionTokens(db, Buffer.from(stack.env.MT_SECRET_KEY, 'hex'), 'default', machine.id);
    expect(tokens?.accessToken).toBe(bearers.at(-1));
  }, 60_000);

  it('asks for a new token once it expires: one grant for fifty calls at once through two processes', async () => {
    const [machine] = (await stack.api.request('GET', '/v1/connections?provider=registered-as')).body;
    const old = bearers.at(-1);
    // Until the token is within the 5 s margin of its recorded expiry.
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, Date.parse(machine.accessTokenExpiresAt) - 5_000 - Date.now() + 200)),
    );
    const grantsBefore = clientCredentialGrants();
    const from = bearers.length;
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => callFleet(stack.servers[i % 2]!.url)));
    for (const answer of answers) expect(answer).toMatchObject({ ok: true, body: { client: as.registered[0] } });
    expect(clientCredentialGrants() - grantsBefore).toBe(1);
    const sent = new Set(bearers.slice(from));
    expect(sent.size).toBe(1);
    expect(sent.has(old ?? '')).toBe(false);
    expect(as.registered).toHaveLength(1);
    const [renewed] = (await stack.api.request('GET', '/v1/connections?provider=registered-as')).body;
    expect(Date.parse(renewed.accessTokenExpiresAt)).toBeGreaterThan(Date.parse(machine.accessTokenExpiresAt));
  }, 60_000);

  it('deleting the last auth provider of the issuer deletes the registered client at the server (RFC 7592)', async () => {
    const clientId = as.registered[0]!;
    const { rows } = await db.query<{ uri: string }>('SELECT registration_client_uri AS uri FROM mt_oauth_clients');
    expect(rows).toEqual([{ uri: `${as.issuer}/reg/${clientId}` }]);
    expect(await as.provider.Client.find(clientId)).toBeDefined();
    // Another provider of the same issuer keeps the client; the tool and connector go first (they pin the provider).
    await stack.api.deploy([
      { path: 'auth-providers/registered-as.mtr', content: `issuer = "${as.issuer}"\nscopes = ["calendar.read"]\n` },
      { path: 'auth-providers/same-as.mtr', content: `issuer = "${as.issuer}"\n` },
      {
        path: 'connectors/open-api/fleet.mtr',
        content: `method = "GET"\nurl = "${upstreamUrl}/fleet"\ndescription = "The company's fleet, for the client itself."\nauth = "OAuth2"\nprovider = @ref("registered-as")\ngrant = "client_credentials"\n`,
      },
      { path: 'external-operations/open-api/fleet.mtr', content: 'connector = @ref("fleet")\nguidance = "Fleet."\n' },
    ]);
    for (const path of ['/v1/extops/fleet', '/v1/connectors/fleet', '/v1/auth-providers/registered-as']) {
      const deleted = await stack.api.request('DELETE', path);
      expect(deleted.status, `${path} ${JSON.stringify(deleted.body)}`).toBe(204);
    }
    expect(await as.provider.Client.find(clientId)).toBeDefined();
    expect((await db.query('SELECT id FROM mt_oauth_clients')).rows).toHaveLength(1);
    // The last one: deleted at the server with its registration access token, then here.
    const last = await stack.api.request('DELETE', '/v1/auth-providers/same-as');
    expect(last.status).toBe(204);
    expect(await as.provider.Client.find(clientId)).toBeUndefined();
    expect((await db.query('SELECT id FROM mt_oauth_clients')).rows).toHaveLength(0);
  }, 60_000);

  it('deployed again, the provider registers a new client; pruned by a deploy, the client is deleted', async () => {
    await stack.api.deploy([
      { path: 'auth-providers/registered-as.mtr', content: `issuer = "${as.issuer}"\nscopes = ["calendar.read"]\n` },
      {
        path: 'connectors/open-api/fleet.mtr',
        content: `method = "GET"\nurl = "${upstreamUrl}/fleet"\ndescription = "The company's fleet, for the client itself."\nauth = "OAuth2"\nprovider = @ref("registered-as")\ngrant = "client_credentials"\n`,
      },
      { path: 'external-operations/open-api/fleet.mtr', content: 'connector = @ref("fleet")\nguidance = "Fleet."\n' },
    ]);
    // The connection kept the deleted client's token: it was deleted with the client (audited), so a new client is
    // registered and asked for a token.
    expect((await stack.api.request('GET', '/v1/connections?provider=registered-as')).body).toEqual([]);
    const audit = await stack.api.request('GET', '/v1/audit?action=connection.deleted');
    expect(audit.body.entries).toContainEqual(
      expect.objectContaining({
        actor: expect.objectContaining({ kind: 'key' }),
        before: { provider: 'registered-as', endUser: '', reason: 'its client was deleted' },
      }),
    );
    const again = await callFleet();
    expect(as.registered).toHaveLength(2);
    expect(again).toMatchObject({ ok: true, body: { client: as.registered[1] } });
    // A deploy with --prune that no longer holds them deletes the tool, connector and provider, and the client.
    const pruned = await stack.api.request('POST', '/v1/deploy', {
      files: [
        {
          path: 'connectors/open-api/other.mtr',
          content: `method = "GET"\nurl = "${upstreamUrl}/other"\ndescription = "Something else."\n`,
        },
      ],
      prune: true,
    });
    expect(pruned.status, JSON.stringify(pruned.body)).toBe(200);
    expect(pruned.body.changes).toContainEqual(expect.objectContaining({ kind: 'auth-provider', action: 'delete' }));
    expect(await as.provider.Client.find(as.registered[1]!)).toBeUndefined();
    expect((await db.query('SELECT id FROM mt_oauth_clients')).rows).toHaveLength(0);
  }, 60_000);

  it('never shows the client secret or a token in the answers or the log', async () => {
    const seen = [
      ...stack.servers.map((server) => server.log()),
      JSON.stringify((await stack.api.request('GET', '/v1/connections')).body),
      JSON.stringify((await stack.api.request('GET', '/v1/auth-providers/registered-as')).body),
    ].join('\n');
    for (const value of [clientSecret, ...new Set(bearers)]) {
      expect(seen.includes(value), `a secret appears: ${value.slice(0, 6)}…`).toBe(false);
    }
  }, 30_000);
});
