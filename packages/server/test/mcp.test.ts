import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEgressPolicy, type Resolver } from '@maitento/egress';
import { createServer } from '@maitento/server';
import { createPgDb, type Db } from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, sampleFiles } from './helpers.js';

const SECRET = 'sk-orders-mcp-8d1e4b7a';
const seen: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[] = [];
let upstream: Server;
let database: TestDatabase;
let db: Db;
let app: FastifyInstance;
let url: string;
// A second server on the same database whose calls wait 20 s for a person's answer: a test that answers while a call
// waits uses it, since app's 1.5 s wait ran out on a loaded machine before the test had found and answered the approval.
let patient: FastifyInstance;
let patientUrl: string;
const adminKey = `mt_${randomBytes(24).toString('base64url')}`;
const secretKey = randomBytes(32);
const clients: Client[] = [];

// intranet.example.com is a public-looking name that resolves to a private address: refused at call time.
const resolver: Resolver = async (hostname) => {
  if (hostname === 'orders.example.test') return [{ address: '127.0.0.1', family: 4 }];
  if (hostname === 'intranet.example.com') return [{ address: '10.20.30.40', family: 4 }];
  throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
};

function files(port: number, extra = '') {
  const origin = `http://orders.example.test:${port}`;
  return [
    ...sampleFiles({ ordersUrl: `${origin}/orders/{orderId}`, weatherUrl: 'http://intranet.example.com/forecast' }),
    {
      path: 'connectors/open-api/orders-refund.mtr',
      content: `method = "POST"
url = "${origin}/orders/{orderId}/refund"
description = "Refunds an amount of an order${extra}"
auth = "Header"
parameters.path = [ { name = "orderId" description = "The order id" type = "string" } ]
schema.request = {
  type = "object"
  properties = { amount = { type = "number" description = "The amount" } }
  required = ["amount"]
  additionalProperties = false
}
schema.response = {
  type = "object"
  properties = { refund = { type = "string" } amount = { type = "number" } }
  required = ["refund", "amount"]
}
`,
    },
    {
      path: 'external-operations/open-api/refund-order.mtr',
      content: `connector = @ref("orders-refund")
guidance = "Refunds an amount of an order."
auth = { header = "X-Api-Key" secret = @ref("orders-key") }
requiresApproval = true
`,
    },
  ];
}

async function rest(method: string, path: string, payload?: unknown, key = adminKey) {
  const res = await app.inject({ method: method as 'POST', url: path, headers: auth(key), payload: payload as object });
  return { status: res.statusCode, body: res.body ? res.json() : undefined };
}

async function connect(key = adminKey, path = '/mcp'): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}${path}`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  clients.push(client);
  return client;
}

async function connectPatient(key = adminKey): Promise<Client> {
  const client = new Client({ name: 'patient', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${patientUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  clients.push(client);
  return client;
}

// A tools/call of a name the endpoint does not serve: a JSON-RPC error -32602 (invalid params), not a tool result.
async function expectUnknownTool(call: Promise<unknown>): Promise<void> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
  expect((error as McpError).data).toEqual({ code: 'api:extops:not-found' });
}

const text = (result: { content?: unknown }) => (result.content as { type: string; text: string }[])[0]?.text ?? '';

interface ApprovalSeen {
  id: string;
  functionName: string;
  argumentsJson: string;
  runId: string | null;
}

// Polls the pending approvals (as `mt approval-list` shows them) until one of the refund of `amount` is there.
// Polls for 20 s (a count of polls ran out sooner the slower each poll was on a loaded machine).
async function waitForApproval(amount: number): Promise<ApprovalSeen> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const list = (await rest('GET', '/v1/approvals')).body as ApprovalSeen[];
    const found = list.find(
      (a) => a.functionName === 'refund-order' && JSON.parse(a.argumentsJson).request.amount === amount,
    );
    if (found) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no pending approval of a refund of ${amount} in 20 s`);
}

/** Another listening server on the same database and key, with MCP settings of its own. */
async function secondServer(mcp: NonNullable<Parameters<typeof createServer>[0]['mcp']>) {
  const server = await createServer({
    db,
    secretKey,
    egress: createEgressPolicy({ allow: '127.0.0.1/32' }),
    resolver,
    logger: false,
    mcp,
  });
  await server.listen({ port: 0, host: '127.0.0.1' });
  return server;
}

beforeAll(async () => {
  upstream = createHttpServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    res.setHeader('content-type', 'application/json');
    // The upstream echoes the key it got: the result must show it masked.
    if (req.url?.endsWith('/refund')) res.end(JSON.stringify({ refund: 'R-1', amount: JSON.parse(body).amount }));
    else res.end(JSON.stringify({ id: req.url?.split('/')[2], echoedKey: req.headers['x-api-key'] }));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  database = await createTestDatabase('mt_server_mcp', { migrated: true });
  db = createPgDb(database.url);
  app = await createServer({
    db,
    secretKey,
    egress: createEgressPolicy({ allow: '127.0.0.1/32' }),
    resolver,
    bootstrapKey: adminKey,
    logger: false,
    mcp: { approvalWaitMs: 1_500, approvalPollMs: 50, progressMs: 200, listChangedPollMs: 100 },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  patient = await secondServer({ approvalWaitMs: 20_000, approvalPollMs: 50, progressMs: 300 });
  patientUrl = `http://127.0.0.1:${(patient.server.address() as AddressInfo).port}`;
  expect((await rest('POST', '/v1/secrets', { name: 'orders-key', value: SECRET })).status).toBe(201);
  expect((await rest('POST', '/v1/deploy', { files: files((upstream.address() as AddressInfo).port) })).status).toBe(
    200,
  );
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  clients.length = 0;
  await patient?.close();
  await app?.close();
  await db?.close();
  await database?.drop();
  await new Promise((resolve) => upstream?.close(resolve));
});

describe('Maitento as an MCP server', () => {
  it('lists every callable tool of the namespace with its stored model-facing definition, unchanged', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['current-weather', 'get-order', 'refund-order']);
    for (const tool of tools) {
      const stored = await rest('GET', `/v1/extops/${tool.name}`);
      expect({ name: tool.name, description: tool.description, parameters: tool.inputSchema }).toEqual(
        stored.body.definition,
      );
    }
    expect(tools.find((t) => t.name === 'refund-order')?.execution).toEqual({ taskSupport: 'optional' });
  });

  it('gives each tool a title and annotations derived from its method and approval', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    // get-order: a GET without approval; refund-order: a POST that needs a person's approval.
    expect(byName.get('get-order')?.title).toBe('Get order');
    expect(byName.get('get-order')?.annotations).toEqual({
      title: 'Get order',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: true,
    });
    expect(byName.get('refund-order')?.title).toBe('Refund order');
    expect(byName.get('refund-order')?.annotations).toEqual({
      title: 'Refund order',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    });
    // A PUT and a DELETE tool, in a namespace of their own.
    const created = await rest('POST', '/v1/namespaces', { name: 'annotated' });
    expect(created.status).toBe(201);
    const key = created.body.key.key as string;
    const origin = `http://orders.example.test:${(upstream.address() as AddressInfo).port}`;
    const connector = (name: string, method: string) => ({
      path: `connectors/open-api/${name}.mtr`,
      content: `method = "${method}"\nurl = "${origin}/notes/{noteId}"\ndescription = "${method} a note"\nparameters.path = [ { name = "noteId" description = "The note id" type = "string" } ]\n`,
    });
    const tool = (name: string, ref: string) => ({
      path: `external-operations/open-api/${name}.mtr`,
      content: `connector = @ref("${ref}")\nguidance = "Changes a note."\n`,
    });
    const deployed = await rest(
      'POST',
      '/v1/deploy',
      {
        files: [
          connector('notes-put', 'PUT'),
          connector('notes-delete', 'DELETE'),
          tool('replace_note', 'notes-put'),
          tool('delete-note', 'notes-delete'),
        ],
      },
      key,
    );
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(200);
    const listed = new Map((await (await connect(key)).listTools()).tools.map((t) => [t.name, t]));
    expect(listed.get('replace_note')?.title).toBe('Replace note');
    expect(listed.get('replace_note')?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: true,
    });
    expect(listed.get('delete-note')?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: true,
    });
  });

  it('declares outputSchema from schema.response and returns the body as structuredContent, never a body that does not match', async () => {
    const created = await rest('POST', '/v1/namespaces', { name: 'typed' });
    expect(created.status).toBe(201);
    const key = created.body.key.key as string;
    const origin = `http://orders.example.test:${(upstream.address() as AddressInfo).port}`;
    // The upstream answers {"id": "<orderId>", "echoedKey": ...} to these GETs.
    const connector = (name: string, response: string) => ({
      path: `connectors/open-api/${name}.mtr`,
      content: `method = "GET"\nurl = "${origin}/orders/{orderId}"\ndescription = "An order"\nparameters.path = [ { name = "orderId" description = "The order id" type = "string" } ]\nschema.response = ${response}\n`,
    });
    const tool = (name: string) => ({
      path: `external-operations/open-api/${name}.mtr`,
      content: `connector = @ref("${name}-c")\nguidance = "Reads an order."\n`,
    });
    const deployed = await rest(
      'POST',
      '/v1/deploy',
      {
        files: [
          connector('typed-order-c', '{ type = "object" properties = { id = { type = "string" } } required = ["id"] }'),
          connector(
            'wrong-order-c',
            '{ type = "object" properties = { total = { type = "number" } } required = ["total"] }',
          ),
          connector('listed-order-c', '{ type = "array" }'),
          connector('composed-order-c', '{ allOf = [ { type = "object" required = ["id"] } ] }'),
          tool('typed-order'),
          tool('wrong-order'),
          tool('listed-order'),
          tool('composed-order'),
        ],
      },
      key,
    );
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(200);
    // The SDK's Client checks every result of a tool with an outputSchema: it throws when a successful result has
    // no structuredContent or one that does not match the schema.
    const client = await connect(key);
    const listed = new Map((await client.listTools()).tools.map((t) => [t.name, t]));
    expect(listed.get('typed-order')?.outputSchema).toEqual({
      type: 'object',
      properties: { id: { type: 'string' } },
      required: ['id'],
    });
    // Only an object schema can describe structuredContent (a JSON object): an array's tool stays text only.
    expect(listed.get('listed-order')?.outputSchema).toBeUndefined();
    const args = { additionalInputs: { 'path.orderId': 'T-1' } };
    const ok = await client.callTool({ name: 'typed-order', arguments: args });
    expect(ok.isError).toBe(false);
    expect(ok.structuredContent).toEqual({ id: 'T-1' });
    // Old clients read the same object as the text content.
    expect(JSON.parse(text(ok))).toEqual(ok.structuredContent);
    // A body that does not match the declared schema is an error result without structuredContent.
    const wrong = await client.callTool({ name: 'wrong-order', arguments: args });
    expect(wrong.isError).toBe(true);
    expect(wrong.structuredContent).toBeUndefined();
    expect(JSON.parse(text(wrong))).toMatchObject({ code: 'api:gateway:response-invalid', body: { id: 'T-1' } });
    const plain = await client.callTool({ name: 'listed-order', arguments: args });
    expect(plain.structuredContent).toBeUndefined();
    // A composed schema (as mt import openapi writes one) that admits only objects: the same with its root type said.
    expect(listed.get('composed-order')?.outputSchema).toEqual({
      type: 'object',
      allOf: [{ type: 'object', required: ['id'] }],
    });
    const composed = await client.callTool({ name: 'composed-order', arguments: args });
    expect(composed.structuredContent).toEqual({ id: 'T-1' });
  });

  it('calls a tool through the gateway with its secret, and the echoed secret comes back masked', async () => {
    const client = await connect();
    const result = await client.callTool({
      name: 'get-order',
      arguments: { additionalInputs: { 'path.orderId': 'A-7' } },
    });
    expect(result.isError).toBe(false);
    expect(JSON.parse(text(result))).toEqual({ id: 'A-7', echoedKey: '[secret]' });
    expect(seen.at(-1)?.headers['x-api-key']).toBe(SECRET);
    expect(JSON.stringify(result)).not.toContain(SECRET);
  });

  it('refuses a call to a name that resolves to a private address, as an isError result with the code', async () => {
    const client = await connect();
    const before = seen.length;
    const result = await client.callTool({
      name: 'current-weather',
      arguments: { additionalInputs: { 'query.latitude': 1, 'query.longitude': 2 } },
    });
    expect(result.isError).toBe(true);
    expect(JSON.parse(text(result)).code).toBe('api:connectors:address-blocked');
    expect(text(result)).not.toMatch(/\n\s+at /);
    expect(seen.length).toBe(before);
  });

  it('answers an unknown tool with JSON-RPC -32602, and bad arguments with an isError result naming its code', async () => {
    const client = await connect();
    await expectUnknownTool(client.callTool({ name: 'no-such-tool', arguments: {} }));
    const bad = await client.callTool({ name: 'get-order', arguments: { nope: 1 } });
    expect([bad.isError, JSON.parse(text(bad)).code]).toEqual([true, 'api:gateway:argument-unknown']);
  });

  it('serves an agent its own functions only, and refuses an unknown agent', async () => {
    const client = await connect(adminKey, '/mcp/agents/support-agent');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['get-order']);
    await expectUnknownTool(client.callTool({ name: 'refund-order', arguments: {} }));
    await expect(connect(adminKey, '/mcp/agents/nobody')).rejects.toThrow(/404|api:agents:not-found/);
  });

  it("calls an agent's functions as its latest version pins them, from the first call after a deploy", async () => {
    const port = (upstream.address() as AddressInfo).port;
    const agent = (refs: string[]) => ({
      path: 'agents/desk-agent.mtr',
      content: `model = "openai:gpt-4o-mini"
instructions = "Help at the desk."
functions = [ ${refs.map((r) => `{ ref = @ref("${r}") }`).join(', ')} ]
`,
    });
    expect((await rest('POST', '/v1/deploy', { files: [...files(port), agent(['get-order'])] })).status).toBe(200);
    const client = await connect(adminKey, '/mcp/agents/desk-agent');
    const order = await client.callTool({
      name: 'get-order',
      arguments: { additionalInputs: { 'path.orderId': 'D-1' } },
    });
    expect(order.isError).toBe(false);
    // The agent's function list (its latest version's pins) is read on every call: not yet a function of it.
    await expectUnknownTool(client.callTool({ name: 'current-weather', arguments: {} }));
    const deployed = await rest('POST', '/v1/deploy', {
      files: [...files(port), agent(['get-order', 'current-weather'])],
    });
    expect(deployed.status).toBe(200);
    // The same session, the next call: the new version's pins, not a cached older version (the intranet address
    // is blocked, so the call is made and refused by the egress policy: a tool result, not -32602).
    const weather = await client.callTool({
      name: 'current-weather',
      arguments: { additionalInputs: { 'query.latitude': 1, 'query.longitude': 2 } },
    });
    expect([weather.isError, JSON.parse(text(weather)).code]).toEqual([true, 'api:connectors:address-blocked']);
  });

  it('keeps namespaces apart, and refuses a session to another key', async () => {
    const created = await rest('POST', '/v1/namespaces', { name: 'other-team' });
    expect(created.status).toBe(201);
    const otherKey = created.body.key.key as string;
    const other = await connect(otherKey);
    expect((await other.listTools()).tools).toEqual([]);
    await expectUnknownTool(
      other.callTool({ name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'A' } } }),
    );
    // Another key on the session an admin key opened.
    const mine = await connect();
    const sessionId = (mine.transport as StreamableHTTPClientTransport).sessionId;
    const res = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${otherKey}`,
        'mcp-session-id': sessionId ?? '',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
    expect(res.status).toBe(403);
    expect((await res.json()).code).toBe('api:mcp:session-key-mismatch');
    const noKey = await fetch(`${url}/mcp`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(noKey.status).toBe(401);
  });

  it('tells open sessions tools/list_changed after a deploy and after a disable', async () => {
    const client = await connect();
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes += 1;
    });
    await client.listTools();
    const until = async (n: number) => {
      for (let i = 0; i < 100 && changes < n; i++) await new Promise((r) => setTimeout(r, 50));
      expect(changes).toBeGreaterThanOrEqual(n);
    };
    const port = (upstream.address() as AddressInfo).port;
    expect((await rest('POST', '/v1/deploy', { files: files(port, ', in the currency paid') })).status).toBe(200);
    await until(1);
    const seenChanges = changes;
    expect((await rest('POST', '/v1/extops/current-weather/versions/1/disable')).status).toBe(200);
    await until(seenChanges + 1);
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('current-weather');
    expect((await rest('POST', '/v1/extops/current-weather/versions/1/enable')).status).toBe(200);
  });
});

describe('a tool that requires approval, over MCP', () => {
  const refund = (amount: number) => ({
    name: 'refund-order',
    arguments: { request: { amount }, additionalInputs: { 'path.orderId': 'A-9' } },
  });

  it('names the pending approval after the wait, then gives its outcome when called again: the call made once', async () => {
    const client = await connect();
    const progress: string[] = [];
    const first = await client.callTool(refund(12), undefined, {
      onprogress: (p) => {
        progress.push(p.message ?? '');
      },
    });
    expect(first.isError).toBe(true);
    const pending = JSON.parse(text(first));
    expect(pending.code).toBe('api:mcp:approval-pending');
    const approval = await waitForApproval(12);
    expect(pending.error).toContain(approval.id);
    expect(pending.error).toContain(`mt approval-approve ${approval.id}`);
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[0]).toContain(approval.id);
    expect(approval.runId).toBeNull();
    expect(JSON.parse(approval.argumentsJson)).toEqual(refund(12).arguments);
    // Calling again while it waits asks nothing new.
    const again = await client.callTool(refund(12));
    expect(JSON.parse(text(again)).error).toContain(approval.id);
    expect(
      (await rest('GET', '/v1/approvals')).body.filter(
        (a: { functionName: string }) => a.functionName === 'refund-order',
      ),
    ).toHaveLength(1);
    const before = seen.filter((r) => r.url.endsWith('/refund')).length;
    expect((await rest('POST', `/v1/approvals/${approval.id}/approve`)).status).toBe(200);
    expect((await rest('POST', `/v1/approvals/${approval.id}/approve`)).status).toBe(409);
    const outcome = await client.callTool(refund(12));
    expect(outcome.isError).toBe(false);
    expect(JSON.parse(text(outcome))).toEqual({ refund: 'R-1', amount: 12 });
    const refunds = seen.filter((r) => r.url.endsWith('/refund'));
    expect(refunds.length).toBe(before + 1);
    expect(refunds.at(-1)?.headers['x-api-key']).toBe(SECRET);
    // The approval is used: the same call again asks a person again.
    const third = await client.callTool(refund(12));
    expect(JSON.parse(text(third)).code).toBe('api:mcp:approval-pending');
    expect(JSON.parse(text(third)).error).not.toContain(approval.id);
    expect(seen.filter((r) => r.url.endsWith('/refund')).length).toBe(before + 1);
  });

  it('returns the call result when a person approves while the call waits, and says plainly a rejected call was not made', async () => {
    const client = await connectPatient();
    const before = seen.filter((r) => r.url.endsWith('/refund')).length;
    const waiting = client.callTool(refund(30));
    const mine = await waitForApproval(30);
    expect((await rest('POST', `/v1/approvals/${mine.id}/reject`, { reason: 'too much for this order' })).status).toBe(
      200,
    );
    const rejected = await waiting;
    expect(rejected.isError).toBe(true);
    expect(JSON.parse(text(rejected))).toMatchObject({ code: 'api:approvals:rejected' });
    expect(text(rejected)).toContain('NOT made');
    expect(text(rejected)).toContain('too much for this order');
    expect(seen.filter((r) => r.url.endsWith('/refund')).length).toBe(before);
  });

  it('returns a task that completes when a person approves (MCP tasks extension)', async () => {
    const client = await connect();
    await client.listTools();
    const before = seen.filter((r) => r.url.endsWith('/refund')).length;
    const stream = client.experimental.tasks.callToolStream(refund(44), undefined, { task: {} });
    let taskId = '';
    let result: unknown;
    const answer = waitForApproval(44).then((found) => rest('POST', `/v1/approvals/${found.id}/approve`));
    for await (const message of stream) {
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      if (message.type === 'result') result = message.result;
      if (message.type === 'error') throw message.error;
    }
    expect((await answer).status).toBe(200);
    expect(taskId).not.toBe('');
    expect(JSON.parse(text(result as { content: unknown }))).toEqual({ refund: 'R-1', amount: 44 });
    expect((result as { structuredContent?: unknown }).structuredContent).toEqual({ refund: 'R-1', amount: 44 });
    expect(seen.filter((r) => r.url.endsWith('/refund')).length).toBe(before + 1);
  });
});

describe('approvals over MCP, with several waiters and an expiry', () => {
  const refund = (amount: number) => ({
    name: 'refund-order',
    arguments: { request: { amount }, additionalInputs: { 'path.orderId': 'B-2' } },
  });

  it('asks once for two identical calls made at once, and makes the approved call once', async () => {
    const [a, b] = [await connectPatient(), await connectPatient()];
    const before = seen.filter((r) => r.url.endsWith('/refund')).length;
    // Each call's first progress notification names the approval it waits for.
    const waitingFor: string[][] = [[], []];
    const calls = [a, b].map((client, i) =>
      client.callTool(refund(7), undefined, { onprogress: (p) => waitingFor[i]!.push(p.message ?? '') }),
    );
    const approval = await waitForApproval(7);
    // Answered once both calls wait (on a loaded machine the second may reach the server late): both on that one.
    const deadline = Date.now() + 20_000;
    while (waitingFor.some((messages) => messages.length === 0)) {
      expect(Date.now() < deadline, 'both calls wait for a person within 20 s').toBe(true);
      await new Promise((r) => setTimeout(r, 20));
    }
    for (const messages of waitingFor) expect(messages[0]).toContain(approval.id);
    expect((await rest('POST', `/v1/approvals/${approval.id}/approve`)).status).toBe(200);
    const results = await Promise.all(calls);
    const codes = results.map((r) => (r.isError ? JSON.parse(text(r)).code : 'ok')).sort();
    expect(codes).toEqual(['api:mcp:approval-used', 'ok']);
    const listed = (await rest('GET', '/v1/approvals?status=all')).body as ApprovalSeen[];
    expect(
      listed.filter((x) => x.functionName === 'refund-order' && JSON.parse(x.argumentsJson).request.amount === 7),
    ).toHaveLength(1);
    expect(seen.filter((r) => r.url.endsWith('/refund')).length).toBe(before + 1);
  });

  it('says an approval that expired before anyone answered was not made (MT_APPROVAL_TTL)', async () => {
    // A second server on the same database whose approvals expire after 0.3 s.
    const expiring = await secondServer({ approvalWaitMs: 1_500, approvalPollMs: 50, approvalTtlMs: 300 });
    try {
      const client = new Client({ name: 'expiry', version: '1' });
      const port = (expiring.server.address() as AddressInfo).port;
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${adminKey}` } },
        }),
      );
      clients.push(client);
      const before = seen.filter((r) => r.url.endsWith('/refund')).length;
      const result = await client.callTool(refund(3));
      expect(result.isError).toBe(true);
      expect(JSON.parse(text(result)).code).toBe('api:mcp:approval-expired');
      expect(text(result)).toContain('NOT made');
      expect(seen.filter((r) => r.url.endsWith('/refund')).length).toBe(before);
    } finally {
      await expiring.close();
    }
  });
});

describe('an approved MCP call, checked at the moment of acting', () => {
  const refund = (amount: number) => ({
    name: 'refund-order',
    arguments: { request: { amount }, additionalInputs: { 'path.orderId': 'M-1' } },
  });
  const refunds = () => seen.filter((r) => r.url.endsWith('/refund')).length;

  it('keeps a client whose request timeout is shorter than the wait waiting when it resets its timeout on progress', async () => {
    const client = await connectPatient(adminKey);
    // Without resetTimeoutOnProgress the SDK client gives up after its timeout, however much progress comes.
    const gaveUp = await client.callTool(refund(65), undefined, { timeout: 3_000, onprogress: () => undefined }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((gaveUp as McpError).code).toBe(ErrorCode.RequestTimeout);
    // With it (as hosts built on the TypeScript or Python SDK can), progress every 0.3 s keeps the call alive until
    // the person answers, 3.5 s later: the client gets the call's result. (The client's timeout is 3 s, not 1 s: at
    // load 23 two progress notifications came more than 1 s apart.)
    const before = refunds();
    let progress = 0;
    const waiting = client.callTool(refund(66), undefined, {
      timeout: 3_000,
      resetTimeoutOnProgress: true,
      onprogress: () => {
        progress += 1;
      },
    });
    const approval = await waitForApproval(66);
    await new Promise((r) => setTimeout(r, 3_500));
    expect((await rest('POST', `/v1/approvals/${approval.id}/approve`)).status).toBe(200);
    const result = await waiting;
    expect(result.isError).toBe(false);
    expect(result.structuredContent).toEqual({ refund: 'R-1', amount: 66 });
    expect(refunds()).toBe(before + 1);
    expect(progress).toBeGreaterThanOrEqual(5);
  });

  it('sends nothing when the tool version was disabled while the call waited for its approval', async () => {
    const client = await connectPatient(adminKey);
    const before = refunds();
    const waiting = client.callTool(refund(61));
    const approval = await waitForApproval(61);
    // The version the waiting call uses: the latest (earlier tests deployed again).
    const { version } = (await rest('GET', '/v1/extops/refund-order')).body as { version: number };
    expect((await rest('POST', `/v1/extops/refund-order/versions/${version}/disable`)).status).toBe(200);
    try {
      expect((await rest('POST', `/v1/approvals/${approval.id}/approve`)).status).toBe(200);
      const result = await waiting;
      expect(result.isError).toBe(true);
      expect(JSON.parse(text(result)).code).toBe('api:extops:version-disabled');
      expect(refunds()).toBe(before);
    } finally {
      expect((await rest('POST', `/v1/extops/refund-order/versions/${version}/enable`)).status).toBe(200);
    }
  });

  it("sends nothing when the caller's key was deleted while the call waited for its approval (its wake-up lost)", async () => {
    const created = await rest('POST', '/v1/keys', { role: 'admin', name: 'short-lived' });
    expect(created.status).toBe(201);
    const client = await connectPatient(created.body.key);
    const before = refunds();
    const waiting = client.callTool(refund(62));
    const approval = await waitForApproval(62);
    // Deleted without its wake-up (as when the notification is lost), so the session is not ended for it: the
    // check right before sending is what stops the call.
    await db.query('DELETE FROM mt_api_keys WHERE id = $1', [created.body.id]);
    expect((await rest('POST', `/v1/approvals/${approval.id}/approve`)).status).toBe(200);
    const result = await waiting;
    expect(result.isError).toBe(true);
    expect(JSON.parse(text(result)).code).toBe('api:calls:key-deleted');
    expect(refunds()).toBe(before);
  });

  it("sends nothing when the tool's secret was deleted while the call waited for its approval", async () => {
    const client = await connectPatient(adminKey);
    const before = refunds();
    const waiting = client.callTool(refund(64));
    const approval = await waitForApproval(64);
    const secrets = (await rest('GET', '/v1/secrets')).body as { id: string; name: string }[];
    const secret = secrets.find((s) => s.name === 'orders-key')!;
    expect((await rest('DELETE', `/v1/secrets/${secret.id}`)).status).toBe(204);
    try {
      expect((await rest('POST', `/v1/approvals/${approval.id}/approve`)).status).toBe(200);
      const result = await waiting;
      expect(result.isError).toBe(true);
      expect(JSON.parse(text(result)).code).toBe('api:gateway:secret-not-found');
      expect(refunds()).toBe(before);
    } finally {
      expect((await rest('POST', '/v1/secrets', { name: 'orders-key', value: SECRET })).status).toBe(201);
    }
  });

  it('gives an approval made over MCP a lifetime without MT_APPROVAL_TTL: approved and unused past it, it lets nothing through', async () => {
    const client = await connect();
    const before = refunds();
    const first = await client.callTool(refund(63));
    expect(JSON.parse(text(first)).code).toBe('api:mcp:approval-pending');
    const approval = await waitForApproval(63);
    const shown = (await rest('GET', `/v1/approvals/${approval.id}`)).body as { expiresAt: string | null };
    expect(shown.expiresAt).not.toBeNull();
    const lifetime = Date.parse(shown.expiresAt!) - Date.now();
    expect(lifetime).toBeGreaterThan(59 * 60_000);
    expect(lifetime).toBeLessThanOrEqual(60 * 60_000);
    expect((await rest('POST', `/v1/approvals/${approval.id}/approve`)).status).toBe(200);
    // Approved, then left unused past its lifetime: the same call again is not made with it.
    await db.query("UPDATE mt_approvals SET expires_at = now() - interval '1 second' WHERE id = $1", [approval.id]);
    const late = await client.callTool(refund(63));
    expect(late.isError).toBe(true);
    expect(JSON.parse(text(late)).code).toBe('api:mcp:approval-expired');
    expect(refunds()).toBe(before);
  });
});
