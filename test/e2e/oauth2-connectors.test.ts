import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConflictError, Maitento } from '@maitento/sdk';
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
import { runMt } from './support/harness.js';

// Connectors with auth = "OAuth2" (docs/connections.md) through the real `mt serve`, a real authorization server
// (oidc-provider) and an upstream on 127.0.0.1 that accepts only that server's live access tokens: a run names its
// end user, and each call carries that person's access token as a Bearer, to the connector's origin only. An
// expired token is refreshed once before the call; a refresh token the provider revoked marks the connection as
// needing its person again. No token reaches the model, the events or the log.

/** Seconds an access token of the test provider lives: short, so that the tests see one expire. */
const ACCESS_TOKEN_TTL = 20;

let stack: RunsStack;
let as: AuthorizationServer;
let db: Db;
let callbackUrl: string;
let upstream: Server;
let elsewhere: Server;
let upstreamUrl: string;
/** The requests the upstream and the other origin received. */
const received: { path: string; headers: IncomingHttpHeaders }[] = [];
const landed: IncomingHttpHeaders[] = [];
/** The grants the authorization server's token endpoint made, by grant type. */
const grants: string[] = [];
/** While true, the upstream answers 401 to every token (a token it no longer accepts). */
let rejectAll = false;

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

async function connect(endUser: string, account: string, scopes: string[] = []) {
  const link = await stack.api.request('POST', '/v1/connections/links', { provider: 'local-as', endUser, scopes });
  expect(link.status, JSON.stringify(link.body)).toBe(201);
  const back = await authorize(link.body.url, account, callbackUrl);
  const done = await fetch(back, { redirect: 'manual', signal: AbortSignal.timeout(15_000) });
  expect(done.status, await done.text()).toBe(200);
  const [connection] = (await stack.api.request('GET', `/v1/connections?endUser=${endUser}`)).body;
  return connection as { id: string; status: string; scopes: string[] };
}

function tokensOf(id: string) {
  return readConnectionTokens(db, Buffer.from(stack.env.MT_SECRET_KEY, 'hex'), 'default', id);
}

/** The tool-result events of a run. */
async function toolResults(runId: string) {
  return (await stack.api.events(runId)).filter((e) => e.type === 'tool-result').map((e) => e.data);
}

async function runFor(interaction: string, endUser?: string) {
  const started = await stack.api.startRun(interaction, {}, endUser === undefined ? {} : { endUser });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  return stack.api.waitForEnd(started.body.id);
}

beforeAll(async () => {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  callbackUrl = `${origin}/v1/connections/callback`;
  as = await startAuthorizationServer({ redirectUri: callbackUrl, accessTokenTtl: ACCESS_TOKEN_TTL });
  as.provider.on('grant.success', (ctx: { oidc: { params?: { grant_type?: unknown } } }) => {
    grants.push(String(ctx.oidc.params?.grant_type));
  });
  // The other origin a redirect of the upstream points to: it must never see the access token.
  elsewhere = createServer((req, res) => {
    landed.push(req.headers);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ landed: true }));
  });
  const elsewhereUrl = await listen(elsewhere);
  // The upstream: it accepts a live access token of the test provider and answers whose it is.
  upstream = createServer((req, res) => {
    received.push({ path: req.url ?? '', headers: req.headers });
    res.setHeader('content-type', 'application/json');
    if (req.url === '/redirect') {
      res.statusCode = 307;
      res.setHeader('location', `${elsewhereUrl}/landing`);
      res.end('{}');
      return;
    }
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    if (req.url === '/fleet') {
      // The client's own token (client credentials): no person behind it.
      answerBearer(res, as.provider.ClientCredentials.find(token), (found) => ({ client: found.clientId }));
      return;
    }
    answerBearer(
      res,
      as.provider.AccessToken.find(token),
      (found) => ({ sub: found.accountId, scope: found.scope }),
      rejectAll,
    );
  });
  upstreamUrl = await listen(upstream);

  const scripts = await mkdtemp(join(tmpdir(), 'mt-e2e-oauth2-scripts-'));
  await writeFile(
    join(scripts, 'me.json'),
    JSON.stringify([{ toolCalls: [{ name: 'whoami', arguments: {} }] }, { text: 'Looked.' }]),
  );
  // Five calls in one model turn: ten such runs at once make fifty calls with one expired token.
  await writeFile(
    join(scripts, 'burst.json'),
    JSON.stringify([
      { toolCalls: Array.from({ length: 5 }, () => ({ name: 'whoami', arguments: {} })) },
      { text: 'Looked five times.' },
    ]),
  );
  await writeFile(
    join(scripts, 'fleet.json'),
    JSON.stringify([{ toolCalls: [{ name: 'fleet', arguments: {} }] }, { text: 'Counted.' }]),
  );
  await writeFile(
    join(scripts, 'broken.json'),
    JSON.stringify([{ toolCalls: [{ name: 'broken', arguments: {} }] }, { text: 'Tried.' }]),
  );
  await writeFile(
    join(scripts, 'hop.json'),
    JSON.stringify([{ toolCalls: [{ name: 'hop', arguments: {} }] }, { text: 'Hopped.' }]),
  );
  // Two mt serve processes, each with its worker: the refresh is one across processes.
  stack = await startRunsStack({
    servers: 2,
    deploy: false,
    // A run waits for its end user to connect as long as an approval waits.
    env: { MT_PUBLIC_URL: origin, MT_LOG_LEVEL: 'debug', MT_SCRIPTED_MODELS: scripts, MT_APPROVAL_TTL: '20' },
    serveArgs: ['--port', String(port)],
  });
  db = createPgDb(stack.env.DATABASE_URL);
  const secret = await stack.api.request('POST', '/v1/secrets', {
    name: 'local-as-client-secret',
    value: as.clientSecret,
  });
  expect(secret.status).toBe(201);
  const agent = (name: string, tool: string) => ({
    path: `agents/${name}-agent.mtr`,
    content: `model = "scripted:${name}"\ninstructions = "Act for the signed-in person."\nfunctions = [ { ref = @ref("${tool}") } ]\n`,
  });
  const interaction = (name: string) => ({
    path: `interactions/one-shot/${name}.mtr`,
    content: `agent = { name = "Helper" agent = @ref("${name}-agent") }\ntask = "Do it for the person."\n`,
  });
  await stack.api.deploy([
    localAsProvider(as, { issuer: as.issuer }),
    {
      path: 'connectors/open-api/me.mtr',
      content: `method = "GET"
url = "${upstreamUrl}/me"
description = "Who the signed-in person is."
auth = "OAuth2"
provider = @ref("local-as")
scopes = ["calendar.read"]
`,
    },
    {
      path: 'connectors/open-api/hop.mtr',
      content: `method = "GET"
url = "${upstreamUrl}/redirect"
description = "Redirects elsewhere."
auth = "OAuth2"
provider = @ref("local-as")
`,
    },
    { path: 'external-operations/open-api/whoami.mtr', content: 'connector = @ref("me")\nguidance = "Who am I."\n' },
    { path: 'external-operations/open-api/hop.mtr', content: 'connector = @ref("hop")\nguidance = "Hop."\n' },
    {
      path: 'connectors/open-api/fleet.mtr',
      content: `method = "GET"
url = "${upstreamUrl}/fleet"
description = "The company's fleet, for the client itself."
auth = "OAuth2"
provider = @ref("local-as")
grant = "client_credentials"
`,
    },
    { path: 'external-operations/open-api/fleet.mtr', content: 'connector = @ref("fleet")\nguidance = "Fleet."\n' },
    // A provider whose stored version a test breaks (its authorization endpoint no longer a URL).
    {
      path: 'auth-providers/broken-as.mtr',
      content: `authorizationUrl = "${as.issuer}/auth"
tokenUrl = "${as.issuer}/token"
clientId = "${as.clientId}"
clientSecret = @ref("local-as-client-secret")
`,
    },
    {
      path: 'connectors/open-api/broken.mtr',
      content: `method = "GET"
url = "${upstreamUrl}/me"
description = "Who the signed-in person is, through the broken provider."
auth = "OAuth2"
provider = @ref("broken-as")
`,
    },
    { path: 'external-operations/open-api/broken.mtr', content: 'connector = @ref("broken")\nguidance = "Broken."\n' },
    agent('broken', 'broken'),
    interaction('broken'),
    agent('fleet', 'fleet'),
    interaction('fleet'),
    agent('burst', 'whoami'),
    interaction('burst'),
    agent('me', 'whoami'),
    agent('hop', 'hop'),
    interaction('me'),
    interaction('hop'),
  ]);
}, 120_000);

afterAll(async () => {
  await db?.close();
  await stack?.close();
  await as?.close();
  upstream?.closeAllConnections();
  upstream?.close();
  elsewhere?.closeAllConnections();
  elsewhere?.close();
});

describe('OAuth2 connectors', () => {
  it('pins the auth provider in the connector version', async () => {
    const connector = await stack.api.request('GET', '/v1/connectors/me');
    expect(connector.status).toBe(200);
    expect(connector.body).toMatchObject({
      resource: { auth: 'OAuth2', provider: 'local-as', scopes: ['calendar.read'] },
    });
  });

  it('a run without an end user, or an app run whose end user has no connection, sends nothing', async () => {
    const before = received.length;
    const anonymous = await runFor('me');
    expect((await toolResults(anonymous.id))[0]).toMatchObject({ ok: false, code: 'api:connections:end-user-missing' });
    // An app run (interactive false) has nobody to hand a connect link to: the call fails at once.
    const started = await stack.api.startRun('me', {}, { endUser: 'nobody', interactive: false });
    const stranger = await stack.api.waitForEnd(started.body.id);
    expect(stranger.endUser).toBe('nobody');
    expect((await toolResults(stranger.id))[0]).toMatchObject({
      ok: false,
      code: 'api:connections:authorization-required',
    });
    expect(received.length).toBe(before);
  }, 60_000);

  it('an unexpected error while making the connect link fails the run with that error, not an unknown outcome', async () => {
    // The stored provider version no longer reads: its authorization endpoint is not a URL (a bug or a hand edit).
    // Versions are immutable (a trigger refuses the update): the test edits the row around it, as a superuser can.
    await db.transaction(async (tx) => {
      await tx.query('SET LOCAL session_replication_role = replica');
      await tx.query(
        `UPDATE mt_resource_versions SET resource = jsonb_set(resource::jsonb, '{authorizationUrl}', '"::not a url"')::json ` +
          `WHERE kind = 'auth-provider' AND name = 'broken-as'`,
      );
    });
    const before = received.length;
    const started = await stack.api.startRun('broken', {}, { endUser: 'olga' });
    expect(started.status).toBe(201);
    const ended = await stack.api.waitForEnd(started.body.id, 30_000);
    expect(ended.status).toBe('Failed');
    expect(ended.error?.code).toBe('api:connections:link-failed');
    expect(ended.error?.message).toContain('was NOT made');
    expect(ended.error?.message).toContain('olga must connect at broken-as');
    expect(ended.error?.message).toContain('TypeError: Invalid URL');
    // The call's result says the same, once; it never reads as a call whose outcome is unknown.
    const results = await toolResults(ended.id);
    expect(results).toEqual([expect.objectContaining({ ok: false, code: 'api:connections:link-failed' })]);
    const events = JSON.stringify(await stack.api.events(ended.id));
    expect(events).not.toContain('call-outcome-unknown');
    expect(received.length).toBe(before);
  }, 60_000);

  it('a run whose end user lacks the connection waits with a connect link, and resumes once they connect', async () => {
    // Frank is connected, without the connector's scope: his run waits for him to connect again, with it.
    await connect('frank', 'frank-sub');
    const before = received.length;
    const started = await stack.api.startRun('me', {}, { endUser: 'frank' });
    const waiting = await stack.api.waitForRun(started.body.id, (r) => r.status === 'PendingAuthorization');
    expect(waiting.pendingAuthorization).toMatchObject({
      provider: 'local-as',
      endUser: 'frank',
      reason: 'missing scopes: calendar.read',
    });
    expect(waiting.pendingAuthorization?.scopes).toEqual(['openid', 'offline_access', 'calendar.read']);
    const events = await stack.api.events(started.body.id);
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['authorization-requested', 'run-waiting']));
    expect(received.length).toBe(before);
    // The person opens the URL the run shows; the callback resumes the run, which makes its call once.
    const back = await authorize(waiting.pendingAuthorization?.url ?? '', 'frank-sub', callbackUrl);
    const done = await fetch(back, { redirect: 'manual', signal: AbortSignal.timeout(15_000) });
    expect(done.status).toBe(200);
    const ended = await stack.api.waitForEnd(started.body.id);
    expect(ended.status).toBe('Completed');
    const results = await toolResults(ended.id);
    expect(results).toHaveLength(1);
    expect(JSON.parse(String(results[0]?.result))).toMatchObject({ sub: 'frank-sub' });
    expect(received.slice(before).filter((r) => r.path === '/me')).toHaveLength(1);
    expect((await stack.api.events(ended.id)).map((e) => e.type)).toContain('authorization-completed');
    // The link the run made is audited as the run's.
    const audit = await stack.api.request('GET', '/v1/audit?action=connection.link-created');
    expect(audit.body.entries).toContainEqual(
      expect.objectContaining({
        actor: expect.objectContaining({ kind: 'system', via: 'run' }),
        after: expect.objectContaining({ endUser: 'frank', runId: started.body.id }),
      }),
    );
  }, 60_000);

  it("the SDK's onWaiting is told of the wait, with the connect URL to hand the person", async () => {
    await stack.api.request(
      'DELETE',
      `/v1/connections/${(await stack.api.request('GET', '/v1/connections?endUser=frank')).body[0].id}`,
    );
    const mt = new Maitento({ baseUrl: stack.servers[0]!.url, apiKey: stack.adminKey });
    const told: string[] = [];
    const run = await mt.interactionRuns.run('me', {
      endUser: 'frank',
      onWaiting: async (waiting) => {
        told.push(waiting.status);
        const back = await authorize(waiting.pendingAuthorization?.url ?? '', 'frank-sub', callbackUrl);
        expect((await fetch(back, { redirect: 'manual' })).status).toBe(200);
      },
    });
    expect(told).toEqual(['PendingAuthorization']);
    expect(run.status).toBe('Completed');
    expect(JSON.parse(String((await toolResults(run.id))[0]?.result))).toMatchObject({ sub: 'frank-sub' });
  }, 60_000);

  it("a turn's later calls, marked started while their token is read, wait too and are each made once", async () => {
    // Five calls in one turn for a person not connected: each call after the first is marked started while its
    // connection is read (decision 0280); every one waits, and once she connects each is made once.
    const before = received.filter((r) => r.path === '/me').length;
    const started = await stack.api.startRun('burst', {}, { endUser: 'kim' });
    const waiting = await stack.api.waitForRun(started.body.id, (r) => r.status === 'PendingAuthorization');
    expect(received.filter((r) => r.path === '/me').length).toBe(before);
    const back = await authorize(waiting.pendingAuthorization?.url ?? '', 'kim-sub', callbackUrl);
    expect((await fetch(back, { redirect: 'manual', signal: AbortSignal.timeout(15_000) })).status).toBe(200);
    const ended = await stack.api.waitForEnd(started.body.id);
    expect(ended.status).toBe('Completed');
    const results = await toolResults(ended.id);
    expect(results).toHaveLength(5);
    for (const result of results) expect(JSON.parse(String(result?.result))).toMatchObject({ sub: 'kim-sub' });
    expect(received.filter((r) => r.path === '/me').length - before).toBe(5);
  }, 60_000);

  it('a run waiting for a connection fails when its wait expires (MT_APPROVAL_TTL), or ends when cancelled', async () => {
    const started = await stack.api.startRun('me', {}, { endUser: 'henry' });
    await stack.api.waitForRun(started.body.id, (r) => r.status === 'PendingAuthorization');
    const expired = await stack.api.waitForEnd(started.body.id, 40_000);
    expect(expired.status).toBe('Failed');
    expect(expired.error).toMatchObject({ code: 'api:connections:authorization-expired' });
    // mt interaction-run --end-user … --wait stops at the wait and prints the link to hand the person.
    const env = { MT_API_URL: stack.servers[0]!.url, MT_API_KEY: stack.adminKey };
    const cli = await runMt(['interaction-run', 'me', '--end-user', 'ivan', '--wait'], { home: stack.home, env });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain('waits for ivan to connect at local-as (not connected)');
    expect(cli.stdout).toContain(`${as.issuer}/auth?`);
    const [other] = (await stack.api.request('GET', '/v1/runs?status=PendingAuthorization')).body.runs;
    expect((await stack.api.request('POST', `/v1/runs/${other.id}/cancel`)).status).toBe(200);
    expect((await stack.api.getRun(other.id)).status).toBe('Cancelled');
  }, 60_000);

  it("sends the run's end user's access token as a Bearer, each person their own", async () => {
    const erin = await connect('erin', 'erin-sub', ['calendar.read']);
    const gina = await connect('gina', 'gina-sub', ['calendar.read']);
    expect(erin.scopes).toContain('calendar.read');
    const [erinRun, ginaRun] = await Promise.all([runFor('me', 'erin'), runFor('me', 'gina')]);
    expect(erinRun.status).toBe('Completed');
    const [erinResult] = await toolResults(erinRun.id);
    const [ginaResult] = await toolResults(ginaRun.id);
    expect(erinResult).toMatchObject({ ok: true, status: 200 });
    expect(JSON.parse(String(erinResult?.result))).toMatchObject({ sub: 'erin-sub' });
    expect(JSON.parse(String(ginaResult?.result))).toMatchObject({ sub: 'gina-sub' });
    const sent = received.filter((r) => r.path === '/me').map((r) => r.headers.authorization);
    expect(sent).toContain(`Bearer ${(await tokensOf(erin.id))?.accessToken}`);
    expect(sent).toContain(`Bearer ${(await tokensOf(gina.id))?.accessToken}`);
  }, 60_000);

  it('a client credentials connector gets the client its own token, with no end user, and keeps it', async () => {
    const before = grants.filter((g) => g === 'client_credentials').length;
    const [first, second] = [await runFor('fleet'), await runFor('fleet')];
    for (const run of [first, second]) {
      const [result] = await toolResults(run.id);
      expect(result, JSON.stringify(result)).toMatchObject({ ok: true, status: 200 });
      expect(JSON.parse(String(result?.result))).toEqual({ client: as.clientId });
    }
    // One grant: the second run used the token kept (sealed) as the connection with no end user.
    expect(grants.filter((g) => g === 'client_credentials').length - before).toBe(1);
    const [machine] = (await stack.api.request('GET', '/v1/connections?provider=local-as')).body.filter(
      (c: { endUser: string }) => c.endUser === '',
    );
    expect(machine).toMatchObject({ provider: 'local-as', status: 'Active', hasRefreshToken: false });
  }, 60_000);

  it('a direct REST call acts for the end user it names: refused with their connect link until they connect', async () => {
    const before = received.length;
    // No end user named for a connector that acts for one: 422, nothing sent.
    const anonymous = await stack.api.request('POST', '/v1/extops/whoami/call', { arguments: {} });
    expect([anonymous.status, anonymous.body.code]).toEqual([422, 'api:connections:end-user-missing']);
    // Paula has not connected: 409 with the connect link for her (no run exists to wait).
    const refused = await stack.api.request('POST', '/v1/extops/whoami/call', { arguments: {}, endUser: 'paula' });
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    expect(refused.body).toMatchObject({
      code: 'api:connections:authorization-required',
      authorization: {
        provider: 'local-as',
        endUser: 'paula',
        reason: 'not connected',
        scopes: ['openid', 'offline_access', 'calendar.read'],
      },
    });
    expect(refused.body.authorization.url).toContain(`${as.issuer}/auth?`);
    expect(Date.parse(refused.body.authorization.expiresAt)).toBeGreaterThan(Date.now());
    expect(received.length).toBe(before);
    // The SDK: a ConflictError whose `authorization` is the link; the person opens it, the call is made again.
    const mt = new Maitento({ baseUrl: stack.servers[1]!.url, apiKey: stack.adminKey });
    const error = await mt.extops.call('whoami', { arguments: {}, endUser: 'paula' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    const link = (error as ConflictError).authorization;
    expect(link).toMatchObject({ provider: 'local-as', endUser: 'paula', reason: 'not connected' });
    const back = await authorize(link?.url ?? '', 'paula-sub', callbackUrl);
    expect((await fetch(back, { redirect: 'manual', signal: AbortSignal.timeout(15_000) })).status).toBe(200);
    const made = await mt.extops.call('whoami', { arguments: {}, endUser: 'paula' });
    expect(made).toMatchObject({ ok: true, status: 200 });
    expect(made.body).toMatchObject({ sub: 'paula-sub', scope: expect.stringContaining('calendar.read') });
    const [paula] = (await stack.api.request('GET', '/v1/connections?endUser=paula')).body;
    expect(received.at(-1)?.headers.authorization).toBe(`Bearer ${(await tokensOf(paula.id))?.accessToken}`);
    expect(received.length - before).toBe(1);
    // The links a direct call made are audited as the calling key's, naming the tool.
    const audit = await stack.api.request('GET', '/v1/audit?action=connection.link-created');
    expect(audit.body.entries).toContainEqual(
      expect.objectContaining({
        actor: expect.objectContaining({ kind: 'key', via: 'api' }),
        after: expect.objectContaining({ endUser: 'paula', tool: 'whoami' }),
      }),
    );
    // A connection without the connector's scope is refused the same way, its reason said.
    await connect('quinn', 'quinn-sub');
    const lacking = await stack.api.request('POST', '/v1/extops/whoami/call', { arguments: {}, endUser: 'quinn' });
    expect([lacking.status, lacking.body.authorization?.reason]).toEqual([409, 'missing scopes: calendar.read']);
    // A client credentials connector called over REST needs no end user: the client's own token.
    const fleet = await stack.api.request('POST', '/v1/extops/fleet/call', { arguments: {} });
    expect(fleet.status, JSON.stringify(fleet.body)).toBe(200);
    expect(fleet.body).toMatchObject({ ok: true, status: 200, body: { client: as.clientId } });
  }, 60_000);

  it('mt extop-call --end-user calls the deployed tool through the server, printing the connect link first', async () => {
    const env = { MT_API_URL: stack.servers[0]!.url, MT_API_KEY: stack.adminKey };
    const before = received.length;
    const refused = await runMt(['extop-call', 'whoami', '--end-user', 'rita'], { home: stack.home, env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('error [api:connections:authorization-required]');
    expect(refused.stderr).toContain('rita connects by opening this URL');
    const url = refused.stdout.trim();
    expect(url.startsWith(`${as.issuer}/auth?`), url).toBe(true);
    expect(received.length).toBe(before);
    // Options of a local call make no sense through the server.
    const mixed = await runMt(['extop-call', 'whoami', '--end-user', 'rita', '--dry-run'], { home: stack.home, env });
    expect([mixed.code, mixed.stderr]).toEqual([1, expect.stringContaining('api:cli:call-options-invalid')]);
    const back = await authorize(url, 'rita-sub', callbackUrl);
    expect((await fetch(back, { redirect: 'manual', signal: AbortSignal.timeout(15_000) })).status).toBe(200);
    const made = await runMt(['extop-call', 'whoami', '--end-user', 'rita', '--json'], { home: stack.home, env });
    expect(made.code, made.stderr).toBe(0);
    expect(JSON.parse(made.stdout)).toMatchObject({ ok: true, status: 200, body: { sub: 'rita-sub' } });
    expect(received.length - before).toBe(1);
  }, 60_000);

  it('drops the token on a redirect to another origin', async () => {
    const run = await runFor('hop', 'erin');
    const [result] = await toolResults(run.id);
    expect(result).toMatchObject({ ok: true });
    expect(received.filter((r) => r.path === '/redirect').at(-1)?.headers.authorization).toMatch(/^Bearer /);
    expect(landed).toHaveLength(1);
    expect(landed[0]?.authorization).toBeUndefined();
  }, 60_000);

  it('refreshes an expired access token once before the call, the new tokens stored sealed', async () => {
    const [erin] = (await stack.api.request('GET', '/v1/connections?endUser=erin')).body;
    const before = await tokensOf(erin.id);
    // Until the access token has expired (its record says when).
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, Date.parse(erin.accessTokenExpiresAt) - Date.now())),
    );
    const refreshesBefore = grants.filter((g) => g === 'refresh_token').length;
    const callsBefore = received.filter((r) => r.path === '/me').length;
    // Ten runs of five calls each, started through both servers (each has a worker): fifty calls, one refresh.
    const second = api(stack.servers[1]!.url, stack.adminKey);
    const started = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? second : stack.api).startRun('burst', {}, { endUser: 'erin' })),
    );
    const runs = await Promise.all(started.map((s) => stack.api.waitForEnd(s.body.id)));
    for (const run of runs) {
      const results = await toolResults(run.id);
      expect(results).toHaveLength(5);
      for (const result of results) {
        expect(result, JSON.stringify(result)).toMatchObject({ ok: true, status: 200 });
        expect(JSON.parse(String(result?.result))).toMatchObject({ sub: 'erin-sub' });
      }
    }
    expect(received.filter((r) => r.path === '/me').length - callsBefore).toBe(50);
    expect(grants.filter((g) => g === 'refresh_token').length - refreshesBefore).toBe(1);
    const after = await tokensOf(erin.id);
    expect(after?.accessToken).not.toBe(before?.accessToken);
    const shown = (await stack.api.request('GET', `/v1/connections/${erin.id}`)).body;
    expect(Date.parse(shown.accessTokenExpiresAt)).toBeGreaterThan(Date.parse(erin.accessTokenExpiresAt));
    // The client's own token expired too: asked for again once.
    const before2 = grants.filter((g) => g === 'client_credentials').length;
    const fleet = await runFor('fleet');
    expect((await toolResults(fleet.id))[0]).toMatchObject({ ok: true, status: 200 });
    expect(grants.filter((g) => g === 'client_credentials').length - before2).toBe(1);
  }, 60_000);

  it('a 401 of the upstream refreshes the token once and the call is made once more; a second 401 is the result', async () => {
    const [erin] = (await stack.api.request('GET', '/v1/connections?endUser=erin')).body;
    // The provider withdraws the current access token before its expiry: the upstream answers 401 to it.
    await (await as.provider.AccessToken.find((await tokensOf(erin.id))?.accessToken ?? ''))?.destroy();
    let refreshes = grants.filter((g) => g === 'refresh_token').length;
    let calls = received.filter((r) => r.path === '/me').length;
    const run = await runFor('me', 'erin');
    const [result] = await toolResults(run.id);
    expect(result, JSON.stringify(result)).toMatchObject({ ok: true, status: 200 });
    expect(grants.filter((g) => g === 'refresh_token').length - refreshes).toBe(1);
    const sent = received.filter((r) => r.path === '/me').slice(calls);
    expect(sent).toHaveLength(2);
    // The same call twice: the same Idempotency-Key would go with a write; here a GET, and a new token.
    expect(sent[0]?.headers.authorization).not.toBe(sent[1]?.headers.authorization);
    // An upstream that refuses every token: one refresh, one more try, then the 401 is the call's result.
    rejectAll = true;
    try {
      refreshes = grants.filter((g) => g === 'refresh_token').length;
      calls = received.filter((r) => r.path === '/me').length;
      const refused = await runFor('me', 'erin');
      expect((await toolResults(refused.id))[0]).toMatchObject({ ok: false, status: 401 });
      expect(received.filter((r) => r.path === '/me').length - calls).toBe(2);
      expect(grants.filter((g) => g === 'refresh_token').length - refreshes).toBe(1);
    } finally {
      rejectAll = false;
    }
  }, 60_000);

  it('a refresh token the provider revoked makes the connection need its person again, and the run waits', async () => {
    const gina = (await stack.api.request('GET', '/v1/connections?endUser=gina')).body[0];
    const tokens = await tokensOf(gina.id);
    await (await as.provider.RefreshToken.find(tokens?.refreshToken ?? ''))?.destroy();
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, Date.parse(gina.accessTokenExpiresAt) - Date.now())),
    );
    const started = await stack.api.startRun('me', {}, { endUser: 'gina' });
    const waiting = await stack.api.waitForRun(started.body.id, (r) => r.status === 'PendingAuthorization');
    expect(waiting.pendingAuthorization?.reason).toBe('the provider refused the refresh token');
    expect((await stack.api.request('GET', `/v1/connections/${gina.id}`)).body.status).toBe('NeedsReauthorization');
    // Connecting again makes the connection Active and the run goes on with the new token.
    const back = await authorize(waiting.pendingAuthorization?.url ?? '', 'gina-sub', callbackUrl);
    expect((await fetch(back, { redirect: 'manual' })).status).toBe(200);
    const ended = await stack.api.waitForEnd(started.body.id);
    expect(JSON.parse(String((await toolResults(ended.id))[0]?.result))).toMatchObject({ sub: 'gina-sub' });
    expect((await stack.api.request('GET', `/v1/connections/${gina.id}`)).body.status).toBe('Active');
  }, 60_000);

  it('never shows an access or refresh token in the events, the runs or the log', async () => {
    const { rows } = await db.query<{ id: string }>('SELECT id FROM mt_connections');
    const secrets: string[] = [];
    for (const { id } of rows) {
      const tokens = await tokensOf(id);
      secrets.push(tokens?.accessToken ?? '', tokens?.refreshToken ?? '');
    }
    // Every token the upstream was sent, including the ones a refresh replaced.
    for (const r of received) {
      const bearer = /^Bearer (.+)$/.exec(r.headers.authorization ?? '')?.[1];
      if (bearer) secrets.push(bearer);
    }
    expect(secrets.filter((s) => s.length >= 20).length).toBeGreaterThanOrEqual(6);
    const { rows: runs } = await db.query<{ id: string }>('SELECT id FROM mt_runs');
    const seen: string[] = stack.servers.map((server) => server.log());
    for (const { id } of runs) {
      seen.push(JSON.stringify(await stack.api.events(id)), JSON.stringify(await stack.api.getRun(id)));
    }
    const text = seen.join('\n');
    for (const value of secrets.filter((s) => s !== '')) {
      expect(text.includes(value), `a token appears: ${value.slice(0, 6)}…`).toBe(false);
    }
  }, 60_000);
});
