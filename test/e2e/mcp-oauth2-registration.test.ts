import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createPgDb, type Db } from '@maitento/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AuthorizationServer,
  authorize,
  freePort,
  startAuthorizationServer,
  calendarMcpConnector,
} from './helpers/authorization-server.js';
import { api } from './helpers/api.js';
import {
  type McpRequestSeen,
  type ProtectedMcpServer,
  startProtectedMcpServer,
} from './helpers/protected-mcp-server.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';

// Dynamic client registration (RFC 7591, docs/connections.md, decision 0315): an auth provider that names only the
// protected resource (a remote MCP server that requires OAuth, with its protected-resource metadata, RFC 9728) and no
// client id has its client registered at the authorization server the metadata names (oidc-provider with open
// registration) on first use, once for the namespace, issuer and redirect URI across two `mt serve` processes; the
// registered client's secret is sealed; the run waits for its person, they consent, and the call is made.

let stack: RunsStack;
let as: AuthorizationServer;
let db: Db;
let callbackUrl: string;
let mcp: ProtectedMcpServer;
let mcpUrl: string;
/** Every HTTP request the MCP server received (its `received`, emptied by a test where it counts from a point). */
let received: McpRequestSeen[];

async function toolResults(runId: string) {
  return (await stack.api.events(runId)).filter((e) => e.type === 'tool-result').map((e) => e.data);
}

beforeAll(async () => {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  callbackUrl = `${origin}/v1/connections/callback`;
  // The server knows no client beforehand that Maitento uses: Maitento registers its own.
  as = await startAuthorizationServer({ redirectUri: `${origin}/unused`, registration: true });
  mcp = await startProtectedMcpServer(as);
  mcpUrl = mcp.url;
  received = mcp.received;
  const scripts = await mkdtemp(join(tmpdir(), 'mt-e2e-mcp-registration-scripts-'));
  await writeFile(
    join(scripts, 'meeting.json'),
    JSON.stringify([
      { toolCalls: [{ name: 'meeting', arguments: { request: { day: 'monday' } } }] },
      { text: 'Looked.' },
    ]),
  );
  stack = await startRunsStack({
    deploy: false,
    servers: 2,
    env: { MT_PUBLIC_URL: origin, MT_SCRIPTED_MODELS: scripts },
    serveArgs: ['--port', String(port)],
  });
  db = createPgDb(stack.env.DATABASE_URL);
  await stack.api.deploy([
    {
      // No issuer and no client id: the issuer is found in the MCP server's metadata, the client registered there.
      path: 'auth-providers/mcp-as.mtr',
      content: `resource = "${mcpUrl}"
scopes = ["openid", "offline_access"]
authorizationParams = { prompt = "consent" }
`,
    },
    calendarMcpConnector(mcpUrl, 'mcp-as'),
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
  ]);
}, 120_000);

afterAll(async () => {
  await db?.close();
  await stack?.close();
  await as?.close();
  await mcp?.close();
});

describe('an auth provider with no client id, at a server that offers dynamic client registration', () => {
  it('shows no client id', async () => {
    const provider = await stack.api.request('GET', '/v1/auth-providers/mcp-as');
    expect(provider.status).toBe(200);
    expect(provider.body.resource).toMatchObject({ resource: mcpUrl });
    expect(provider.body.resource.clientId).toBeUndefined();
    expect(as.registered).toEqual([]);
  });

  it('two runs in two processes register one client, wait for their people, and call the tool once connected', async () => {
    const second = api(stack.servers[1]!.url, stack.adminKey);
    const [a, b] = await Promise.all([
      stack.api.startRun('meeting', {}, { endUser: 'olga' }),
      second.startRun('meeting', {}, { endUser: 'piet' }),
    ]);
    expect(a.status, JSON.stringify(a.body)).toBe(201);
    expect(b.status, JSON.stringify(b.body)).toBe(201);
    const [olga, piet] = await Promise.all([
      stack.api.waitForRun(a.body.id, (r) => r.status === 'PendingAuthorization'),
      second.waitForRun(b.body.id, (r) => r.status === 'PendingAuthorization'),
    ]);
    // One registration at the authorization server, one stored client, its secret sealed (not in the row's text).
    expect(as.registered).toHaveLength(1);
    const { rows } = await db.query<{ client_id: string; issuer: string; redirect_uri: string; sealed: string }>(
      "SELECT client_id, issuer, redirect_uri, encode(ciphertext, 'escape') AS sealed FROM mt_oauth_clients",
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ client_id: as.registered[0], issuer: as.issuer, redirect_uri: callbackUrl });
    const client = await as.provider.Client.find(as.registered[0]!);
    expect(client?.clientSecret?.length).toBeGreaterThan(20);
    expect(rows[0]!.sealed.includes(client!.clientSecret!)).toBe(false);
    // Both links name the registered client and the server's redirect URI.
    for (const waiting of [olga, piet]) {
      const url = new URL(waiting.pendingAuthorization?.url ?? '');
      expect(`${url.origin}`).toBe(as.issuer);
      expect(url.searchParams.get('client_id')).toBe(as.registered[0]);
      expect(url.searchParams.get('redirect_uri')).toBe(callbackUrl);
    }
    expect(received).toEqual([]);
    // Olga consents; the callback exchanges the code as the registered client, and her run calls the tool.
    const back = await authorize(olga.pendingAuthorization?.url ?? '', 'olga-sub', callbackUrl);
    const done = await fetch(back, { redirect: 'manual', signal: AbortSignal.timeout(15_000) });
    expect(done.status, await done.text()).toBe(200);
    const ended = await stack.api.waitForEnd(a.body.id);
    expect(ended.status).toBe('Completed');
    const [result] = await toolResults(ended.id);
    expect(result, JSON.stringify(result)).toMatchObject({ ok: true });
    expect(JSON.parse(String(result?.result))).toEqual({ tool: 'next_meeting', sub: 'olga-sub', day: 'monday' });
    expect(received.filter((r) => r.method === 'tools/call').map((r) => r.subject)).toEqual(['olga-sub']);
    // Piet's run, made by the other process, uses the same client.
    const pietBack = await authorize(piet.pendingAuthorization?.url ?? '', 'piet-sub', callbackUrl);
    expect((await fetch(pietBack, { redirect: 'manual', signal: AbortSignal.timeout(15_000) })).status).toBe(200);
    const pietEnded = await second.waitForEnd(b.body.id);
    expect(pietEnded.status).toBe('Completed');
    expect(JSON.parse(String((await toolResults(pietEnded.id))[0]?.result))).toMatchObject({ sub: 'piet-sub' });
    expect(as.registered).toHaveLength(1);
  }, 90_000);

  it("an MCP client's call for a person without a connection answers with their connect link, then is made", async () => {
    const client = new Client({ name: 'e2e-mcp-end-user', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.servers[1]!.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${stack.adminKey}`, 'mt-end-user': 'rosa' } },
      }),
    );
    try {
      const from = received.length;
      const first = await client.callTool({ name: 'meeting', arguments: { request: { day: 'tuesday' } } });
      expect(first.isError).toBe(true);
      const text = (first.content as { type: string; text: string }[])[0]!.text;
      const answer = JSON.parse(text);
      expect(answer).toMatchObject({
        code: 'api:connections:authorization-required',
        authorization: { provider: 'mcp-as', endUser: 'rosa', reason: 'not connected' },
      });
      const url = new URL(answer.authorization.url);
      expect(url.origin).toBe(as.issuer);
      expect(url.searchParams.get('client_id')).toBe(as.registered[0]);
      // Nothing was sent to the MCP server.
      expect(received.length).toBe(from);
      const back = await authorize(url.href, 'rosa-sub', callbackUrl);
      expect((await fetch(back, { redirect: 'manual', signal: AbortSignal.timeout(15_000) })).status).toBe(200);
      const second = await client.callTool({ name: 'meeting', arguments: { request: { day: 'tuesday' } } });
      expect(second.isError, JSON.stringify(second)).toBe(false);
      const body = JSON.parse((second.content as { type: string; text: string }[])[0]!.text);
      expect(JSON.parse(body.content?.[0]?.text ?? JSON.stringify(body))).toMatchObject({ sub: 'rosa-sub' });
      // The person's token never reaches the MCP client.
      const [rosa] = (await stack.api.request('GET', '/v1/connections?endUser=rosa')).body;
      const { readConnectionTokens } = await import('@maitento/store');
      const tokens = await readConnectionTokens(db, Buffer.from(stack.env.MT_SECRET_KEY, 'hex'), 'default', rosa.id);
      expect(JSON.stringify([first, second]).includes(tokens!.accessToken)).toBe(false);
      expect(as.registered).toHaveLength(1);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('a refresh and a revocation use the registered client', async () => {
    const [connection] = (await stack.api.request('GET', '/v1/connections?endUser=olga')).body;
    expect(connection).toMatchObject({ provider: 'mcp-as', status: 'Active' });
    // The access token is forgotten by the server: the next call is answered 401, refreshed as the registered client.
    const { rows } = await db.query<{ id: string }>('SELECT id FROM mt_connections WHERE end_user = $1', ['olga']);
    const { readConnectionTokens } = await import('@maitento/store');
    const key = Buffer.from(stack.env.MT_SECRET_KEY, 'hex');
    const before = await readConnectionTokens(db, key, 'default', rows[0]!.id);
    await (await as.provider.AccessToken.find(before?.accessToken ?? ''))?.destroy();
    const started = await stack.api.startRun('meeting', {}, { endUser: 'olga' });
    const ended = await stack.api.waitForEnd(started.body.id);
    expect(ended.status).toBe('Completed');
    const after = await readConnectionTokens(db, key, 'default', rows[0]!.id);
    expect(after?.accessToken).not.toBe(before?.accessToken);
    // Deleting the connection revokes its refresh token at the server, authenticated as the registered client.
    const deleted = await stack.api.request('DELETE', `/v1/connections/${connection.id}`);
    expect(deleted.status).toBe(200);
    expect(await as.provider.RefreshToken.find(after?.refreshToken ?? '')).toBeUndefined();
    expect(as.registered).toHaveLength(1);
  }, 60_000);
});
