import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORDERS_SECRET, type RunsStack, startRunsStack } from './helpers/stack.js';
import { runMt } from './support/harness.js';

// A real MCP client (the SDK's own) against the real `mt serve` on PostgreSQL, with a recording upstream on
// 127.0.0.1 (allowed by MT_EGRESS_ALLOW) and the runs repo: get-order (a secret), refund-order (approval).
let stack: RunsStack;
const clients: Client[] = [];

async function connect(key = stack.adminKey, path = '/mcp'): Promise<Client> {
  const client = new Client({ name: 'e2e-mcp', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.servers[0].url}${path}`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  clients.push(client);
  return client;
}

const text = (result: { content?: unknown }) => (result.content as { text: string }[])[0]?.text ?? '';
const mtEnv = () => ({ MT_API_URL: stack.servers[0].url, MT_API_KEY: stack.adminKey });
const refund = (amount: number) => ({
  name: 'refund-order',
  arguments: { request: { amount, reason: 'arrived damaged' }, additionalInputs: { 'path.orderId': 'A-1001' } },
});
const refunds = () => stack.upstream.requests.filter((r) => r.url.endsWith('/refund'));

type Pending = { id: string; runId: string | null; argumentsJson: string };
const ofAmount = (list: Pending[], amount: number) =>
  list.find((a) => JSON.parse(a.argumentsJson).request?.amount === amount);

// Waits for the pending approval of a refund of `amount` (polling the REST API: a `mt` process a poll cost ~0.4 s of
// CPU), then checks that `mt approval-list --json` shows it as the person answering it with `mt` would see it.
async function pendingRefund(amount: number): Promise<{ id: string; runId: string | null }> {
  for (let i = 0; i < 200 && !ofAmount((await stack.api.request<Pending[]>('GET', '/v1/approvals')).body, amount); i++)
    await new Promise((r) => setTimeout(r, 50));
  const listed = await runMt(['approval-list', '--json'], { home: stack.home, env: mtEnv() });
  expect(listed.code, listed.stderr).toBe(0);
  const found = ofAmount(JSON.parse(listed.stdout) as Pending[], amount);
  if (!found) throw new Error(`no pending approval of a refund of ${amount}`);
  return found;
}

beforeAll(async () => {
  // Two servers on one database: a change made through one is told to sessions of the other.
  stack = await startRunsStack({ servers: 2, env: { MT_MCP_LIST_POLL: '0.2' } });
}, 120_000);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await stack?.close();
});

describe('mt serve as an MCP server, with the SDK client', () => {
  it('lists the tools and calls one through the gateway; the secret the upstream echoes comes back masked', async () => {
    stack.upstream.setHandler((request, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ id: 'A-1001', status: 'delivered', seenKey: request.headers['x-api-key'] }));
    });
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['current-weather', 'get-order', 'refund-order', 'create-ticket']),
    );
    const result = await client.callTool({
      name: 'get-order',
      arguments: { additionalInputs: { 'path.orderId': 'A-1001' } },
    });
    expect(result.isError).toBe(false);
    expect(JSON.parse(text(result))).toEqual({ id: 'A-1001', status: 'delivered', seenKey: '[secret]' });
    expect(stack.upstream.requests.at(-1)?.headers['x-api-key']).toBe(ORDERS_SECRET);
    expect(stack.servers[0].log()).not.toContain(ORDERS_SECRET);
  });

  it('refuses a call that a redirect sends to a private address, as an isError result with the code', async () => {
    stack.upstream.setHandler((_request, res) => {
      res.statusCode = 302;
      res.setHeader('location', 'http://169.254.169.254/latest/meta-data/');
      res.end();
    });
    const client = await connect();
    const result = await client.callTool({
      name: 'current-weather',
      arguments: {
        additionalInputs: { 'query.latitude': 51.5, 'query.longitude': -0.13, 'query.temperature_unit': null },
      },
    });
    expect(result.isError).toBe(true);
    expect(JSON.parse(text(result)).code).toBe('api:connectors:address-blocked');
    expect(text(result)).not.toMatch(/\n\s+at /);
  });

  it('waits while a person approves with mt approval-approve, then returns the call result, made once', async () => {
    stack.upstream.setHandler((request, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ refund: 'R-77', body: JSON.parse(request.body) }));
    });
    const client = await connect();
    const before = refunds().length;
    const progress: string[] = [];
    const waiting = client.callTool(refund(12.5), undefined, {
      onprogress: (p) => {
        progress.push(p.message ?? '');
      },
    });
    const approval = await pendingRefund(12.5);
    expect(approval.runId).toBeNull();
    expect(refunds().length).toBe(before);
    const approved = await runMt(['approval-approve', approval.id], { home: stack.home, env: mtEnv() });
    expect(approved.code, approved.stderr).toBe(0);
    const result = await waiting;
    expect(result.isError).toBe(false);
    expect(JSON.parse(text(result))).toEqual({ refund: 'R-77', body: { amount: 12.5, reason: 'arrived damaged' } });
    expect(refunds().length).toBe(before + 1);
    expect(refunds().at(-1)?.headers['x-api-key']).toBe(ORDERS_SECRET);
    expect(progress[0]).toContain(approval.id);
    const again = await runMt(['approval-approve', approval.id], { home: stack.home, env: mtEnv() });
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('api:approvals:already-answered');
  });

  it('says plainly that a call rejected with mt approval-reject was not made, and why', async () => {
    const client = await connect();
    const before = refunds().length;
    const waiting = client.callTool(refund(999));
    const approval = await pendingRefund(999);
    const rejected = await runMt(['approval-reject', approval.id, '--reason', 'more than was paid'], {
      home: stack.home,
      env: mtEnv(),
    });
    expect(rejected.code, rejected.stderr).toBe(0);
    const result = await waiting;
    expect(result.isError).toBe(true);
    expect(JSON.parse(text(result)).code).toBe('api:approvals:rejected');
    expect(text(result)).toContain('NOT made');
    expect(text(result)).toContain('more than was paid');
    expect(refunds().length).toBe(before);
  });

  it('never lists or calls a tool of another namespace, and refuses another key on a session', async () => {
    const created = await runMt(['namespace-create', 'mcp-other', '--json'], { home: stack.home, env: mtEnv() });
    expect(created.code, created.stderr).toBe(0);
    const otherKey = JSON.parse(created.stdout).key.key as string;
    const other = await connect(otherKey);
    expect((await other.listTools()).tools).toEqual([]);
    // Another namespace's tool is an unknown tool: JSON-RPC -32602 (invalid params), with the code as data.
    const refused = await other
      .callTool({ name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'A-1001' } } })
      .then(
        () => undefined,
        (e: unknown) => e as { code?: number; data?: unknown },
      );
    expect([refused?.code, refused?.data]).toEqual([-32602, { code: 'api:extops:not-found' }]);
    const mine = await connect();
    const res = await fetch(`${stack.servers[0].url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${otherKey}`,
        'mcp-session-id': (mine.transport as StreamableHTTPClientTransport).sessionId ?? '',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(403);
    expect((await res.json()).code).toBe('api:mcp:session-key-mismatch');
  });

  it('mt mcp-config prints the snippet that connects an MCP host to this server', async () => {
    const printed = await runMt(['mcp-config', '--agent', 'support-agent'], { home: stack.home, env: mtEnv() });
    expect(printed.code, printed.stderr).toBe(0);
    const server = JSON.parse(printed.stdout).mcpServers['maitento-support-agent'];
    expect(server).toEqual({
      type: 'http',
      url: `${stack.servers[0].url}/mcp/agents/support-agent`,
      headers: { Authorization: `Bearer ${stack.adminKey}` },
    });
    const client = new Client({ name: 'host', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers } }),
    );
    clients.push(client);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['get-order', 'refund-order']);
  });

  it('tells a session on one server tools/list_changed when a tool is disabled through another server', async () => {
    const client = await connect();
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed += 1;
    });
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('create-ticket');
    await new Promise((r) => setTimeout(r, 500));
    const other = { ...mtEnv(), MT_API_URL: stack.servers[1].url };
    const disabled = await runMt(['extop-version-disable', 'create-ticket', '1'], { home: stack.home, env: other });
    expect(disabled.code, disabled.stderr).toBe(0);
    for (let i = 0; i < 100 && changed === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(changed).toBeGreaterThan(0);
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('create-ticket');
    const enabled = await runMt(['extop-version-enable', 'create-ticket', '1'], { home: stack.home, env: other });
    expect(enabled.code, enabled.stderr).toBe(0);
  });
});
