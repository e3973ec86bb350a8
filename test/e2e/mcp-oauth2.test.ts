import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPgDb, type Db, readConnectionTokens } from '@maitento/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AuthorizationServer,
  authorize,
  freePort,
  startAuthorizationServer,
  localAsProvider,
  calendarMcpConnector,
} from './helpers/authorization-server.js';
import {
  type McpRequestSeen,
  type ProtectedMcpServer,
  startProtectedMcpServer,
} from './helpers/protected-mcp-server.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';

// An MCP connector with auth = "OAuth2" (docs/connections.md, decision 0285) to a remote MCP server that requires
// OAuth, as the MCP authorization specification has it: the server (the SDK's own Server over Streamable HTTP on
// 127.0.0.1) answers 401 with `WWW-Authenticate: Bearer resource_metadata=...` to a request without a live access
// token of the test authorization server (oidc-provider), and serves its protected-resource metadata (RFC 9728).
// A run for a person without a connection waits with a connect URL; once they consent, the run lists and calls the
// server's tool with that person's token, which never appears in the events, the run or the log.

let stack: RunsStack;
let as: AuthorizationServer;
let db: Db;
let callbackUrl: string;
let mcp: ProtectedMcpServer;
let mcpUrl: string;
/** Every HTTP request the MCP server received (its `received`, emptied by a test where it counts from a point). */
let received: McpRequestSeen[];
/** The metadata reads counted before the first run (the runs' own reads are those after it). */
let metadataBefore = 0;

async function toolResults(runId: string) {
  return (await stack.api.events(runId)).filter((e) => e.type === 'tool-result').map((e) => e.data);
}

beforeAll(async () => {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  callbackUrl = `${origin}/v1/connections/callback`;
  as = await startAuthorizationServer({ redirectUri: callbackUrl });
  mcp = await startProtectedMcpServer(as);
  mcpUrl = mcp.url;
  received = mcp.received;
  const scripts = await mkdtemp(join(tmpdir(), 'mt-e2e-mcp-oauth2-scripts-'));
  await writeFile(
    join(scripts, 'broken.json'),
    JSON.stringify([
      { toolCalls: [{ name: 'broken-meeting', arguments: { request: { day: 'monday' } } }] },
      { text: 'Tried.' },
    ]),
  );
  await writeFile(
    join(scripts, 'meeting.json'),
    JSON.stringify([
      { toolCalls: [{ name: 'meeting', arguments: { request: { day: 'monday' } } }] },
      { text: 'Looked.' },
    ]),
  );
  stack = await startRunsStack({
    deploy: false,
    env: { MT_PUBLIC_URL: origin, MT_LOG_LEVEL: 'debug', MT_SCRIPTED_MODELS: scripts },
    serveArgs: ['--port', String(port)],
  });
  db = createPgDb(stack.env.DATABASE_URL);
  const secret = await stack.api.request('POST', '/v1/secrets', {
    name: 'local-as-client-secret',
    value: as.clientSecret,
  });
  expect(secret.status).toBe(201);
  await stack.api.deploy([
    // No issuer: it is found in the MCP server's protected-resource metadata (RFC 9728).
    localAsProvider(as, { resource: mcpUrl }),
    calendarMcpConnector(mcpUrl, 'local-as'),
    {
      path: 'external-operations/open-api/meeting.mtr',
      content: 'connector = @ref("calendar")\nguidance = "The next meeting; give { day }."\n',
    },
    {
      path: 'agents/meeting-agent.mtr',
      content:
        'model = "scripted:meeting"\ninstructions = "Act for the signed-in person."\nfunctions = [ { ref = @ref("meeting") } ]\n',
    },
    {
      path: 'interactions/one-shot/meeting.mtr',
      content: 'agent = { name = "Helper" agent = @ref("meeting-agent") }\ntask = "Find the meeting."\n',
    },
    // A provider whose stored version a test breaks, and an MCP connector that uses it.
    {
      path: 'auth-providers/broken-as.mtr',
      content: `authorizationUrl = "${as.issuer}/auth"
tokenUrl = "${as.issuer}/token"
clientId = "${as.clientId}"
clientSecret = @ref("local-as-client-secret")
`,
    },
    {
      path: 'connectors/mcp/broken-calendar.mtr',
      content: `url = "${mcpUrl}"
tool = "next_meeting"
description = "The next meeting, through the broken provider."
auth = "OAuth2"
provider = @ref("broken-as")
`,
    },
    {
      path: 'external-operations/open-api/broken-meeting.mtr',
      content: 'connector = @ref("broken-calendar")\nguidance = "The next meeting; give { day }."\n',
    },
    {
      path: 'agents/broken-agent.mtr',
      content:
        'model = "scripted:broken"\ninstructions = "Act for the signed-in person."\nfunctions = [ { ref = @ref("broken-meeting") } ]\n',
    },
    {
      path: 'interactions/one-shot/broken.mtr',
      content: 'agent = { name = "Helper" agent = @ref("broken-agent") }\ntask = "Find the meeting."\n',
    },
  ]);
}, 120_000);

afterAll(async () => {
  await db?.close();
  await stack?.close();
  await as?.close();
  await mcp?.close();
});

describe('an MCP connector to an OAuth-protected MCP server', () => {
  it('deploys without listing the server (no one to act for) and pins the auth provider', async () => {
    expect(received).toEqual([]);
    const connector = await stack.api.request('GET', '/v1/connectors/calendar');
    expect(connector.status).toBe(200);
    expect(connector.body).toMatchObject({
      resource: {
        mcp: { url: mcpUrl, tool: 'next_meeting' },
        auth: 'OAuth2',
        provider: 'local-as',
        scopes: ['calendar.read'],
        schema: { request: { type: 'object' } },
      },
    });
  });

  it('the server refuses a request without a token, and names its authorization server in its metadata', async () => {
    const refused = await fetch(mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(refused.status).toBe(401);
    const challenge = refused.headers.get('www-authenticate') ?? '';
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1] ?? '';
    const metadata = await (await fetch(metadataUrl)).json();
    expect(metadata).toMatchObject({ resource: mcpUrl, authorization_servers: [as.issuer] });
    received.length = 0;
    metadataBefore = mcp.metadataReads();
  });

  it("a run for a person without a connection waits with a URL, then opens a session and calls the tool with that person's token", async () => {
    const started = await stack.api.startRun('meeting', {}, { endUser: 'olga' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const waiting = await stack.api.waitForRun(started.body.id, (r) => r.status === 'PendingAuthorization');
    expect(waiting.pendingAuthorization).toMatchObject({
      provider: 'local-as',
      endUser: 'olga',
      reason: 'not connected',
    });
    expect(waiting.pendingAuthorization?.scopes).toEqual(['openid', 'offline_access', 'calendar.read']);
    // The provider names the MCP server as its resource: the link's authorization server was found in its metadata.
    expect(mcp.metadataReads() - metadataBefore).toBeGreaterThanOrEqual(1);
    expect(waiting.pendingAuthorization?.url.startsWith(`${as.issuer}/`)).toBe(true);
    expect(received).toEqual([]);
    // Olga opens the URL the run shows and consents; the callback resumes the run.
    const back = await authorize(waiting.pendingAuthorization?.url ?? '', 'olga-sub', callbackUrl);
    const done = await fetch(back, { redirect: 'manual', signal: AbortSignal.timeout(15_000) });
    expect(done.status, await done.text()).toBe(200);
    const ended = await stack.api.waitForEnd(started.body.id);
    expect(ended.status).toBe('Completed');
    const [result] = await toolResults(ended.id);
    expect(result, JSON.stringify(result)).toMatchObject({ ok: true });
    expect(JSON.parse(String(result?.result))).toEqual({ tool: 'next_meeting', sub: 'olga-sub', day: 'monday' });
    // The session was opened (initialize) and the tool called, each request with Olga's live token.
    expect(received.map((r) => r.method)).toEqual(expect.arrayContaining(['initialize', 'tools/call']));
    expect(received.every((r) => r.subject === 'olga-sub')).toBe(true);
  }, 60_000);

  it("two people's runs each reach the server with their own token", async () => {
    const [connection] = (await stack.api.request('GET', '/v1/connections?endUser=olga')).body;
    expect(connection).toMatchObject({ provider: 'local-as', status: 'Active' });
    const link = await stack.api.request('POST', '/v1/connections/links', {
      provider: 'local-as',
      endUser: 'piet',
      scopes: ['calendar.read'],
    });
    expect(link.status).toBe(201);
    const back = await authorize(link.body.url, 'piet-sub', callbackUrl);
    expect((await fetch(back, { redirect: 'manual' })).status).toBe(200);
    const runs = await Promise.all(
      ['olga', 'piet'].map(async (endUser) => {
        const started = await stack.api.startRun('meeting', {}, { endUser });
        return stack.api.waitForEnd(started.body.id);
      }),
    );
    const subjects = await Promise.all(
      runs.map(async (run) => JSON.parse(String((await toolResults(run.id))[0]?.result)).sub),
    );
    expect(subjects).toEqual(['olga-sub', 'piet-sub']);
  }, 60_000);

  it('a token the server refuses (401) is refreshed once and the call made on a new session with the new one', async () => {
    const [olga] = (await stack.api.request('GET', '/v1/connections?endUser=olga')).body;
    const key = Buffer.from(stack.env.MT_SECRET_KEY, 'hex');
    const before = await readConnectionTokens(db, key, 'default', olga.id);
    // The authorization server forgets the access token: the MCP server now answers it 401.
    await (await as.provider.AccessToken.find(before?.accessToken ?? ''))?.destroy();
    const from = received.length;
    const started = await stack.api.startRun('meeting', {}, { endUser: 'olga' });
    const ended = await stack.api.waitForEnd(started.body.id);
    expect(ended.status).toBe('Completed');
    const [result] = await toolResults(ended.id);
    expect(JSON.parse(String(result?.result))).toMatchObject({ sub: 'olga-sub' });
    const after = await readConnectionTokens(db, key, 'default', olga.id);
    expect(after?.accessToken).not.toBe(before?.accessToken);
    const seen = received.slice(from);
    expect(seen[0]).toMatchObject({ subject: '(refused)' });
    expect(seen.filter((r) => r.method === 'tools/call' && r.subject === 'olga-sub')).toHaveLength(1);
  }, 60_000);

  it('an unexpected error while making the connect link fails the run with it, never as an unknown call outcome', async () => {
    // The stored provider version no longer reads (its authorization endpoint is not a URL): making the person's
    // link throws inside Maitento. An MCP call carries no idempotency key, so a retried attempt of the run would
    // have read the call as one whose outcome is unknown (api:runs:call-outcome-unknown), though nothing was sent.
    await db.transaction(async (tx) => {
      await tx.query('SET LOCAL session_replication_role = replica');
      await tx.query(
        `UPDATE mt_resource_versions SET resource = jsonb_set(resource::jsonb, '{authorizationUrl}', '"::not a url"')::json ` +
          `WHERE kind = 'auth-provider' AND name = 'broken-as'`,
      );
    });
    const from = received.length;
    const started = await stack.api.startRun('broken', {}, { endUser: 'tess' });
    expect(started.status).toBe(201);
    const ended = await stack.api.waitForEnd(started.body.id, 30_000);
    expect(ended.status).toBe('Failed');
    expect(ended.error).toMatchObject({ code: 'api:connections:link-failed' });
    expect(ended.error?.message).toContain('TypeError: Invalid URL');
    expect(await toolResults(ended.id)).toEqual([
      expect.objectContaining({ ok: false, code: 'api:connections:link-failed' }),
    ]);
    expect(JSON.stringify(await stack.api.events(ended.id))).not.toContain('call-outcome-unknown');
    expect(received.length).toBe(from);
  }, 60_000);

  it('never shows an access or refresh token in the events, the runs or the log', async () => {
    const { rows } = await db.query<{ id: string }>('SELECT id FROM mt_connections');
    const secrets: string[] = [];
    for (const { id } of rows) {
      const tokens = await readConnectionTokens(db, Buffer.from(stack.env.MT_SECRET_KEY, 'hex'), 'default', id);
      secrets.push(tokens?.accessToken ?? '', tokens?.refreshToken ?? '');
    }
    for (const r of received) {
      const bearer = /^Bearer (.+)$/.exec(r.authorization)?.[1];
      if (bearer) secrets.push(bearer);
    }
    expect(secrets.filter((s) => s.length >= 20).length).toBeGreaterThanOrEqual(4);
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
