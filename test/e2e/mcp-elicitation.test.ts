import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type ElicitRequestURLParams,
  ElicitRequestSchema,
  ElicitationCompleteNotificationSchema,
  type ElicitResult,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { createPgDb, type Db, readConnectionTokens } from '@maitento/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AuthorizationServer,
  authorize,
  freePort,
  startAuthorizationServer,
  calendarMcpConnector,
} from './helpers/authorization-server.js';
import {
  type McpRequestSeen,
  type ProtectedMcpServer,
  startProtectedMcpServer,
} from './helpers/protected-mcp-server.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';

// URL-mode elicitation (MCP 2025-11-25, docs/mcp.md, decision 0370): an MCP client that declared
// `elicitation: { url: {} }` calls an OAuth2 tool for a person with no connection; the server asks it to open the
// connect link (`elicitation/create`, `mode: "url"`) in the call's own stream, the person connects through the
// callback, which lands on the OTHER `mt serve` process (the wake-up on `mt_wake` reaches the one holding the call),
// the client is told `notifications/elicitation/complete`, and the call's result is the upstream's answer made with
// that person's token. A declined or cancelled elicitation ends the call with a tool error; a client without the
// capability gets the result with the link, as before.

let stack: RunsStack;
let as: AuthorizationServer;
let db: Db;
let callbackUrl: string;
let mcp: ProtectedMcpServer;
let received: McpRequestSeen[];

beforeAll(async () => {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  callbackUrl = `${origin}/v1/connections/callback`;
  as = await startAuthorizationServer({ redirectUri: `${origin}/unused`, registration: true });
  mcp = await startProtectedMcpServer(as);
  received = mcp.received;
  stack = await startRunsStack({
    deploy: false,
    servers: 2,
    // The wait of a call for a person (its approval or, here, their connection): short, for the test of its end.
    env: { MT_PUBLIC_URL: origin, MT_MCP_APPROVAL_WAIT: '20' },
    serveArgs: ['--port', String(port)],
  });
  db = createPgDb(stack.env.DATABASE_URL);
  await stack.api.deploy([
    {
      path: 'auth-providers/mcp-as.mtr',
      content: `resource = "${mcp.url}"
scopes = ["openid", "offline_access"]
authorizationParams = { prompt = "consent" }
`,
    },
    calendarMcpConnector(mcp.url, 'mcp-as'),
    {
      path: 'external-operations/open-api/meeting.mtr',
      content: 'connector = @ref("calendar")\nguidance = "The next meeting; give { day }."\n',
    },
    {
      path: 'external-operations/open-api/meeting-approved.mtr',
      content: 'connector = @ref("calendar")\nguidance = "The next meeting, once approved."\nrequiresApproval = true\n',
    },
  ]);
}, 120_000);

afterAll(async () => {
  await db?.close();
  await stack?.close();
  await as?.close();
  await mcp?.close();
});

/** An MCP client of the second `mt serve` (the callback is the first's) acting for `endUser`. */
async function connectClient(endUser: string, options: { url: boolean }) {
  const client = new Client(
    { name: 'e2e-mcp-elicitation', version: '1.0.0' },
    options.url ? { capabilities: { elicitation: { url: {} } } } : {},
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.servers[1]!.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${stack.adminKey}`, 'mt-end-user': endUser } },
  });
  // Every message the server sent this client, to look for the token in.
  const traffic: JSONRPCMessage[] = [];
  await client.connect(transport);
  const onmessage = transport.onmessage;
  transport.onmessage = (message, extra) => {
    traffic.push(message);
    onmessage?.(message, extra);
  };
  return { client, traffic };
}

/** The elicitations a client was asked for, answered with `action`; resolves `first` with the first one. */
function answerElicitations(client: Client, action: ElicitResult['action']) {
  const asked: ElicitRequestURLParams[] = [];
  let seen: (params: ElicitRequestURLParams) => void = () => {};
  const first = new Promise<ElicitRequestURLParams>((resolve) => {
    seen = resolve;
  });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const params = request.params as ElicitRequestURLParams;
    asked.push(params);
    seen(params);
    return { action };
  });
  return { asked, first };
}

const meeting = (day: string) => ({ name: 'meeting', arguments: { request: { day } } });
const textOf = (result: unknown) => (result as { content: { type: string; text: string }[] }).content[0]!.text;

describe('an OAuth2 tool called by an MCP client that declared URL-mode elicitation', () => {
  it('asks the client to open the connect link, tells it when the person connected, and makes the call', async () => {
    const { client, traffic } = await connectClient('rosa', { url: true });
    try {
      const { asked, first } = answerElicitations(client, 'accept');
      const completed: string[] = [];
      client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
        completed.push(notification.params.elicitationId);
      });
      const from = received.length;
      const call = client.callTool(meeting('tuesday'));
      const params = await first;
      expect(params).toMatchObject({ mode: 'url', message: expect.stringContaining('rosa') });
      expect(params.elicitationId).toMatch(/^[0-9a-f-]{36}$/);
      const url = new URL(params.url);
      expect(url.origin).toBe(as.issuer);
      expect(url.searchParams.get('redirect_uri')).toBe(callbackUrl);
      // Nothing is sent upstream while the person has not connected.
      expect(received.length).toBe(from);
      // The person connects; the callback is served by the other process.
      const back = await authorize(url.href, 'rosa-sub', callbackUrl);
      const done = await fetch(back, { redirect: 'manual', signal: AbortSignal.timeout(15_000) });
      expect(done.status, await done.text()).toBe(200);
      const result = await call;
      expect(result.isError, JSON.stringify(result)).toBe(false);
      const body = JSON.parse(textOf(result));
      expect(JSON.parse(body.content?.[0]?.text ?? JSON.stringify(body))).toEqual({
        tool: 'next_meeting',
        sub: 'rosa-sub',
        day: 'tuesday',
      });
      expect(received.filter((r) => r.method === 'tools/call').map((r) => r.subject)).toEqual(['rosa-sub']);
      expect(asked).toHaveLength(1);
      expect(completed).toEqual([params.elicitationId]);
      // The notification came before the result, in the call's stream.
      const order = traffic.map((m) => ('method' in m ? m.method : 'result' in m ? 'result' : 'other'));
      expect(order.indexOf('notifications/elicitation/complete')).toBeLessThan(order.lastIndexOf('result'));
      // The elicitation's id is the connect link's; the person's token is nowhere in the MCP traffic.
      const { rows } = await db.query<{ id: string }>('SELECT id FROM mt_connect_links WHERE end_user = $1', ['rosa']);
      expect(rows.map((r) => r.id)).toEqual([params.elicitationId]);
      const [rosa] = (await stack.api.request('GET', '/v1/connections?endUser=rosa')).body;
      const tokens = await readConnectionTokens(db, Buffer.from(stack.env.MT_SECRET_KEY, 'hex'), 'default', rosa.id);
      expect(tokens?.accessToken.length).toBeGreaterThan(10);
      const all = JSON.stringify(traffic);
      expect(all.includes(tokens!.accessToken)).toBe(false);
      expect(tokens?.refreshToken === undefined || !all.includes(tokens.refreshToken)).toBe(true);
      // Connected, the next call is made at once, with no elicitation.
      const again = await client.callTool(meeting('friday'));
      expect(again.isError).toBe(false);
      expect(asked).toHaveLength(1);
    } finally {
      await client.close();
    }
  }, 90_000);

  it('a tool that also requires approval asks for the connection first, then for the approval, then calls', async () => {
    const { client } = await connectClient('vera', { url: true });
    try {
      const { first } = answerElicitations(client, 'accept');
      const completed: string[] = [];
      client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
        completed.push(notification.params.elicitationId);
      });
      const call = client.callTool({ name: 'meeting-approved', arguments: { request: { day: 'thursday' } } });
      const params = await first;
      // No approval is asked for before the person connected.
      const pending = async () =>
        (
          (await stack.api.request<{ id: string; functionName: string; status: string }[]>('GET', '/v1/approvals'))
            .body ?? []
        ).filter((a) => a.functionName === 'meeting-approved' && a.status === 'Pending');
      expect(await pending()).toEqual([]);
      const back = await authorize(params.url, 'vera-sub', callbackUrl);
      expect((await fetch(back, { redirect: 'manual', signal: AbortSignal.timeout(15_000) })).status).toBe(200);
      let approvals = await pending();
      for (let i = 0; i < 200 && approvals.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 50));
        approvals = await pending();
      }
      expect(approvals).toHaveLength(1);
      expect(completed).toEqual([params.elicitationId]);
      const approved = await stack.api.request('POST', `/v1/approvals/${approvals[0]!.id}/approve`, {});
      expect(approved.status, JSON.stringify(approved.body)).toBe(200);
      const result = await call;
      expect(result.isError, JSON.stringify(result)).toBe(false);
      const body = JSON.parse(textOf(result));
      expect(JSON.parse(body.content?.[0]?.text ?? JSON.stringify(body))).toMatchObject({ sub: 'vera-sub' });
    } finally {
      await client.close();
    }
  }, 90_000);

  it('a declined or cancelled elicitation ends the call with a tool error, and nothing is sent', async () => {
    for (const action of ['decline', 'cancel'] as const) {
      const { client } = await connectClient(`sam-${action}`, { url: true });
      try {
        const { asked } = answerElicitations(client, action);
        const from = received.length;
        const result = await client.callTool(meeting('monday'));
        expect(asked).toHaveLength(1);
        expect(result.isError).toBe(true);
        const answer = JSON.parse(textOf(result));
        expect(answer).toMatchObject({ code: 'api:mcp:authorization-declined' });
        expect(answer.error).toContain(`answered ${action}`);
        expect(answer.error).toContain(`sam-${action}`);
        expect(received.length).toBe(from);
        expect((await stack.api.request('GET', `/v1/connections?endUser=sam-${action}`)).body).toEqual([]);
      } finally {
        await client.close();
      }
    }
  }, 60_000);

  it('an accepted elicitation the person does not finish in the wait answers with the link, as before', async () => {
    const { client } = await connectClient('una', { url: true });
    try {
      const { asked } = answerElicitations(client, 'accept');
      const started = Date.now();
      const result = await client.callTool(meeting('monday'));
      // MT_MCP_APPROVAL_WAIT (20 s here), not the link's 10 minutes.
      expect(Date.now() - started).toBeGreaterThanOrEqual(19_000);
      expect(asked).toHaveLength(1);
      expect(result.isError).toBe(true);
      const answer = JSON.parse(textOf(result));
      expect(answer).toMatchObject({
        code: 'api:connections:authorization-required',
        authorization: { provider: 'mcp-as', endUser: 'una', url: asked[0]!.url },
      });
    } finally {
      await client.close();
    }
  }, 60_000);

  it('a client without the capability gets the result carrying the connect link, as before', async () => {
    const { client } = await connectClient('tom', { url: false });
    try {
      const result = await client.callTool(meeting('monday'));
      expect(result.isError).toBe(true);
      const answer = JSON.parse(textOf(result));
      expect(answer).toMatchObject({
        code: 'api:connections:authorization-required',
        authorization: { provider: 'mcp-as', endUser: 'tom', reason: 'not connected' },
      });
      expect(new URL(answer.authorization.url).origin).toBe(as.issuer);
    } finally {
      await client.close();
    }
  }, 60_000);
});
