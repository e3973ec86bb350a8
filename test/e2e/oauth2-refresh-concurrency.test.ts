import { createServer, type Server } from 'node:http';
import { createPgDb, type Db, readConnectionTokens } from '@maitento/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AuthorizationServer,
  authorize,
  freePort,
  startAuthorizationServer,
  localAsProvider,
  answerBearer,
} from './helpers/authorization-server.js';
import { api } from './helpers/api.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';

// An end user's refresh under concurrency (docs/connections.md, decision 0380): fifty direct calls at once
// (`POST /v1/extops/{name}/call` with `endUser`) through two `mt serve` processes after the access token expired make
// one refresh, and every call is answered 200 with the new token: no call waits on the connection's row lock holding
// a pooled connection (a process's calls share one refresh; another process's refresh is waited for by trying the
// row every 100 ms). And the adversary: the process refreshing is SIGKILLed while the token endpoint holds its request
// open; the other process's calls recover within their deadline with one new refresh.

/** Seconds an access token lives: stale 5 s before (the margin), so 7 s after it was issued. */
const ACCESS_TOKEN_TTL = 12;
const CALLS = 50;

let stack: RunsStack;
let as: AuthorizationServer;
let db: Db;
let upstream: Server;
let upstreamUrl: string;
let callbackUrl: string;
/** The grants the token endpoint made, by grant type. */
const grants: string[] = [];
/** The tokens the upstream was sent. */
const bearers: string[] = [];
/** While true, token endpoint requests are parked unanswered (the provider never sees them). */
let holding = false;
const held: { close(): void }[] = [];

const refreshes = () => grants.filter((g) => g === 'refresh_token').length;

beforeAll(async () => {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  callbackUrl = `${origin}/v1/connections/callback`;
  as = await startAuthorizationServer({
    redirectUri: callbackUrl,
    accessTokenTtl: ACCESS_TOKEN_TTL,
    hold: (req) => {
      if (!holding || req.method !== 'POST' || req.url !== '/token') return false;
      held.push({ close: () => req.socket.destroy() });
      return true;
    },
  });
  as.provider.on('grant.success', (ctx: { oidc: { params?: { grant_type?: unknown } } }) => {
    grants.push(String(ctx.oidc.params?.grant_type));
  });
  // The upstream accepts a live access token of the authorization server and answers whose it is.
  upstream = createServer((req, res) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    bearers.push(token);
    answerBearer(res, as.provider.AccessToken.find(token), (found) => ({ sub: found.accountId }));
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
  const secret = await stack.api.request('POST', '/v1/secrets', { name: 'as-secret', value: as.clientSecret });
  expect(secret.status).toBe(201);
  await stack.api.deploy([
    localAsProvider(as, { issuer: as.issuer }, 'as-secret'),
    {
      path: 'connectors/open-api/me.mtr',
      content: `method = "GET"
url = "${upstreamUrl}/me"
description = "Who the signed-in person is."
auth = "OAuth2"
provider = @ref("local-as")
`,
    },
    { path: 'external-operations/open-api/whoami.mtr', content: 'connector = @ref("me")\nguidance = "Who am I."\n' },
  ]);
  // Ann connects once (the connect link, the sign-in at the authorization server, the callback).
  const link = await stack.api.request('POST', '/v1/connections/links', { provider: 'local-as', endUser: 'ann' });
  expect(link.status, JSON.stringify(link.body)).toBe(201);
  const back = await authorize(link.body.url, 'ann-sub', callbackUrl);
  const done = await fetch(back, { redirect: 'manual', signal: AbortSignal.timeout(15_000) });
  expect(done.status, await done.text()).toBe(200);
}, 120_000);

afterAll(async () => {
  holding = false;
  for (const request of held) request.close();
  await db?.close();
  await stack?.close();
  await as?.close();
  upstream?.closeAllConnections();
  upstream?.close();
});

function call(url: string) {
  return api(url, stack.adminKey).request('POST', '/v1/extops/whoami/call', { arguments: {}, endUser: 'ann' });
}

async function connection() {
  const [ann] = (await stack.api.request('GET', '/v1/connections?endUser=ann')).body;
  return ann as { id: string; accessTokenExpiresAt: string };
}

/** Waits until the connection's access token is within the 5 s margin of its recorded expiry. */
async function untilStale() {
  const ann = await connection();
  await new Promise((resolve) =>
    setTimeout(resolve, Math.max(0, Date.parse(ann.accessTokenExpiresAt) - 5_000 - Date.now() + 200)),
  );
  return ann;
}

function tokensOf(id: string) {
  return readConnectionTokens(db, Buffer.from(stack.env.MT_SECRET_KEY, 'hex'), 'default', id);
}

describe("an end user's refresh under concurrency", () => {
  it(`refreshes once for ${CALLS} direct calls at once through two processes, and answers each 200`, async () => {
    const ann = await untilStale();
    const before = await tokensOf(ann.id);
    const refreshesBefore = refreshes();
    const from = bearers.length;
    const answers = await Promise.all(Array.from({ length: CALLS }, (_, i) => call(stack.servers[i % 2]!.url)));
    for (const answer of answers) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body).toMatchObject({ ok: true, status: 200, body: { sub: 'ann-sub' } });
    }
    expect(refreshes() - refreshesBefore).toBe(1);
    const sent = new Set(bearers.slice(from));
    expect(sent.size).toBe(1);
    expect(sent.has(before?.accessToken ?? '')).toBe(false);
    // The new tokens were stored (a rotated refresh token with them): the stored access token is the one sent.
    const after = await tokensOf(ann.id);
    expect(after?.accessToken).toBe([...sent][0]);
    expect(after?.refreshToken).toBeTruthy();
  }, 90_000);

  it('recovers within the deadline with one new refresh when the refreshing process is killed mid-refresh', async () => {
    const ann = await untilStale();
    const before = await tokensOf(ann.id);
    const refreshesBefore = refreshes();
    const [doomed, survivor] = stack.servers as [(typeof stack.servers)[0], (typeof stack.servers)[0]];
    holding = true;
    // One call to the first process: it locks the connection's row and asks for the refresh, which is held open.
    const doomedCall = call(doomed.url).catch((error: unknown) => error);
    const deadline = Date.now() + 15_000;
    while (held.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(held).toHaveLength(1);
    holding = false;
    // The other process's calls find the row held: they wait (one try of the row every 100 ms), sending nothing.
    const from = bearers.length;
    const started = Date.now();
    const survivorCalls = Promise.all(Array.from({ length: CALLS / 2 }, () => call(survivor.url)));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(bearers.length).toBe(from);
    // The refresher dies mid-refresh: its transaction ends with its connection, and the row is free again.
    await doomed.kill();
    const answers = await survivorCalls;
    for (const answer of answers) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body).toMatchObject({ ok: true, status: 200, body: { sub: 'ann-sub' } });
    }
    // Within the wait's deadline (15 s), with one new refresh (the held one never reached the provider).
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(refreshes() - refreshesBefore).toBe(1);
    const sent = new Set(bearers.slice(from));
    expect(sent.size).toBe(1);
    expect(sent.has(before?.accessToken ?? '')).toBe(false);
    expect((await tokensOf(ann.id))?.accessToken).toBe([...sent][0]);
    await doomedCall;
    for (const request of held) request.close();
  }, 90_000);
});
