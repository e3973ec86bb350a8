// A plain tools/call over MCP (no task, no progress token) is answered as one JSON body; every other request keeps
// the SDK's Streamable HTTP transport (SSE for calls that may send progress). docs/mcp.md, docs/decisions/0032-mcp-plain-tools-call-answered-as-json.md.
import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEgressPolicy, type Resolver } from '@maitento/egress';
import { createServer } from '@maitento/server';
import { createPgDb, type Db } from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, sampleFiles } from './helpers.js';

const SECRET = 'sk-orders-json-5c2f9e1d';
let upstream: Server;
let database: TestDatabase;
let db: Db;
let app: FastifyInstance;
let url: string;
let client: Client;
let transport: StreamableHTTPClientTransport;
const adminKey = `mt_${randomBytes(24).toString('base64url')}`;

const resolver: Resolver = async (hostname) => {
  if (hostname === 'orders.example.test') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
};

const callParams = { name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'A-9' } } };
const slowParams = { name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'slow' } } };

// One raw POST on the client's session, as the SDK's client sends it (a string body is sent as it is).
function post(body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${adminKey}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': transport.sessionId ?? '',
      'mcp-protocol-version': '2025-06-18',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(signal === undefined ? {} : { signal }),
  });
}

// The upstream's requests for `/orders/slow` are held until the test releases them; `slowClosed` counts those whose
// connection ended before an answer (the gateway stopped the call).
const held: (() => void)[] = [];
let slowSeen = 0;
let slowClosed = 0;

// A tool that needs a person's approval, beside the sample files.
const approvalFiles = (origin: string) => [
  {
    path: 'connectors/open-api/orders-refund.mtr',
    content: `method = "POST"
url = "${origin}/orders/{orderId}/refund"
description = "Refunds an amount of an order"
auth = "Header"
parameters.path = [ { name = "orderId" description = "The order id" type = "string" } ]
schema.request = { type = "object" properties = { amount = { type = "number" } } required = ["amount"] }
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

// Waits until `check` holds (the server's side of a call is asynchronous to the test's requests).
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
  expect(check()).toBe(true);
}

beforeAll(async () => {
  upstream = createHttpServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    const answer = () => res.end(JSON.stringify({ id: req.url?.split('/')[2], echoedKey: req.headers['x-api-key'] }));
    if (req.url !== '/orders/slow') return answer();
    slowSeen++;
    res.once('close', () => {
      if (!res.writableEnded) slowClosed++;
    });
    held.push(answer);
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  database = await createTestDatabase('mt_server_mcp_json', { migrated: true });
  db = createPgDb(database.url);
  app = await createServer({
    db,
    secretKey: randomBytes(32),
    egress: createEgressPolicy({ allow: '127.0.0.1/32' }),
    resolver,
    bootstrapKey: adminKey,
    logger: false,
    mcp: { approvalWaitMs: 300, approvalPollMs: 50, progressMs: 100 },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const port = (upstream.address() as AddressInfo).port;
  const headers = auth(adminKey);
  const secret = await app.inject({
    method: 'POST',
    url: '/v1/secrets',
    headers,
    payload: { name: 'orders-key', value: SECRET },
  });
  expect(secret.statusCode).toBe(201);
  const files = [
    ...sampleFiles({ ordersUrl: `http://orders.example.test:${port}/orders/{orderId}` }),
    ...approvalFiles(`http://orders.example.test:${port}`),
  ];
  expect((await app.inject({ method: 'POST', url: '/v1/deploy', headers, payload: { files } })).statusCode).toBe(200);
  client = new Client({ name: 'mcp-json-test', version: '1.0.0' });
  transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${adminKey}` } },
  });
  await client.connect(transport);
});

afterAll(async () => {
  for (const release of held.splice(0)) release();
  await client?.close().catch(() => undefined);
  await app?.close();
  await db?.close();
  await database?.drop();
  await new Promise((resolve) => upstream?.close(resolve));
});

describe('plain tools/call over MCP', () => {
  it('is answered as one JSON body with the session id, the same result the SDK client gets', async () => {
    const res = await post({ jsonrpc: '2.0', id: 'plain-1', method: 'tools/call', params: callParams });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('mcp-session-id')).toBe(transport.sessionId);
    const body = await res.json();
    expect(body.jsonrpc).toBe('2.0');
    expect(body.id).toBe('plain-1');
    expect(JSON.parse(body.result.content[0].text)).toEqual({ id: 'A-9', echoedKey: '[secret]' });
    expect(JSON.stringify(body)).not.toContain(SECRET);
    const viaSdk = await client.callTool(callParams);
    expect(viaSdk).toEqual(body.result);
  });

  it("types its answer `application/json` with no parameter (JSON defines none; clients parse every answer's type)", async () => {
    const res = await post({ jsonrpc: '2.0', id: 'typed-1', method: 'tools/call', params: callParams });
    expect(res.headers.get('content-type')).toBe('application/json');
    const text = await res.text();
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(JSON.parse(text).id).toBe('typed-1');
    // An unknown tool's error is answered the same way.
    const refused = await post({
      jsonrpc: '2.0',
      id: 'typed-2',
      method: 'tools/call',
      params: { name: 'no-such-tool' },
    });
    expect(refused.headers.get('content-type')).toBe('application/json');
    expect((await refused.json()).error.code).toBe(-32602);
  });

  it('answers an unknown tool with the JSON-RPC error -32602 in the JSON body', async () => {
    const res = await post({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'no-such-tool' } });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await res.json();
    expect(body.id).toBe(7);
    expect(body.error.code).toBe(-32602);
    expect(body.error.data).toEqual({ code: 'api:extops:not-found' });
  });

  it('keeps the SSE stream for a call with a progress token, so a waiting call can send progress', async () => {
    const params = { ...callParams, _meta: { progressToken: 'p-1' } };
    const res = await post({ jsonrpc: '2.0', id: 'streamed-1', method: 'tools/call', params });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const text = await res.text();
    expect(text).toContain('"id":"streamed-1"');
    expect(text).toContain('event: message');
  });

  it('leaves a protocol version the SDK does not speak to its transport, which refuses it', async () => {
    const res = await post(
      { jsonrpc: '2.0', id: 'old-1', method: 'tools/call', params: callParams },
      { 'mcp-protocol-version': '1999-01-01' },
    );
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toContain('Unsupported protocol version');
  });

  it('refuses a plain call on a session of another key, as every MCP request', async () => {
    const other = await app.inject({
      method: 'POST',
      url: '/v1/keys',
      headers: auth(adminKey),
      payload: { name: 'other', role: 'user' },
    });
    expect(other.statusCode).toBe(201);
    const res = await post(
      { jsonrpc: '2.0', id: 'other-1', method: 'tools/call', params: callParams },
      { authorization: `Bearer ${other.json().key as string}` },
    );
    expect(res.status).toBe(403);
    expect((await res.json()).code).toBe('api:mcp:session-key-mismatch');
  });

  it('leaves malformed tools/call params to the SDK Server, which refuses them as before, and a non-JSON body is 400', async () => {
    const before = slowSeen;
    for (const [id, params] of [
      ['bad-name', { name: 42, arguments: { additionalInputs: { 'path.orderId': 'slow' } } }],
      ['bad-arguments', { name: 'get-order', arguments: ['slow'] }],
    ] as const) {
      const res = await post({ jsonrpc: '2.0', id, method: 'tools/call', params });
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const body = await res.json();
      expect(body.id).toBe(id);
      // The SDK's Protocol parses the request with CallToolRequestSchema before any handler: its zod error
      // becomes an internal error (-32603) naming the field.
      expect(body.error.code).toBe(-32603);
      expect(body.error.message).toContain(id === 'bad-name' ? 'name' : 'arguments');
      expect(body.result).toBeUndefined();
    }
    expect(slowSeen).toBe(before);
    const notJson = await post('{"jsonrpc":"2.0","id":1,"method":"tools/call",');
    expect(notJson.status).toBe(400);
    await notJson.body?.cancel();
  });

  it('refuses a call on a session id that is not open, without calling the tool', async () => {
    const before = slowSeen;
    const res = await post(
      { jsonrpc: '2.0', id: 'lost-1', method: 'tools/call', params: slowParams },
      { 'mcp-session-id': 'no-such-session' },
    );
    expect(res.status).toBe(404);
    expect((await res.json()).code).toBe('api:mcp:session-not-found');
    expect(slowSeen).toBe(before);
  });

  it('answers a batch of calls (protocol 2025-03-26) through the SDK transport, each with its result', async () => {
    const res = await post(
      [
        { jsonrpc: '2.0', id: 'b-1', method: 'tools/call', params: callParams },
        { jsonrpc: '2.0', id: 'b-2', method: 'tools/call', params: { name: 'no-such-tool' } },
      ],
      { 'mcp-protocol-version': '2025-03-26' },
    );
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('"id":"b-1"');
    expect(text).toContain('echoedKey');
    expect(text).toContain('"id":"b-2"');
    expect(text).toContain('-32602');
  });

  it('leaves a call needing approval to the SDK Server: its bounded wait names the pending approval', async () => {
    const params = {
      name: 'refund-order',
      arguments: { request: { amount: 3 }, additionalInputs: { 'path.orderId': 'A-9' } },
    };
    const res = await post({ jsonrpc: '2.0', id: 'approval-1', method: 'tools/call', params });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await res.json();
    expect(body.id).toBe('approval-1');
    expect(body.result.isError).toBe(true);
    expect(JSON.parse(body.result.content[0].text).code).toBe('api:mcp:approval-pending');
    // With a progress token, the same call streams its progress while it waits.
    const streamed = await post({
      jsonrpc: '2.0',
      id: 'approval-2',
      method: 'tools/call',
      params: { ...params, _meta: { progressToken: 'p-2' } },
    });
    expect(streamed.headers.get('content-type')).toBe('text/event-stream');
    const text = await streamed.text();
    expect(text).toContain('notifications/progress');
    expect(text).toContain('api:mcp:approval-pending');
  });

  it('refuses a second call with an id in flight, and stops a call the client cancels (no response for it)', async () => {
    const closedBefore = slowClosed;
    const seenBefore = slowSeen;
    const abort = new AbortController();
    const first = post({ jsonrpc: '2.0', id: 'slow-1', method: 'tools/call', params: slowParams }, {}, abort.signal);
    await until(() => slowSeen === seenBefore + 1);
    const twice = await post({ jsonrpc: '2.0', id: 'slow-1', method: 'tools/call', params: callParams });
    expect((await twice.json()).error).toMatchObject({ code: -32600, message: expect.stringContaining('in flight') });
    const cancelled = await post({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 'slow-1', reason: 'the user stopped it' },
    });
    expect(cancelled.status).toBe(202);
    // The gateway's request to the upstream is stopped, and the call's HTTP exchange stays without an answer.
    await until(() => slowClosed === closedBefore + 1);
    const answered = await Promise.race([first.then(() => true), new Promise((r) => setTimeout(() => r(false), 200))]);
    expect(answered).toBe(false);
    abort.abort();
    await expect(first).rejects.toThrow();
    // The id is free again.
    const again = await post({ jsonrpc: '2.0', id: 'slow-1', method: 'tools/call', params: callParams });
    expect((await again.json()).result.isError).toBe(false);
  });

  it("answers a call still running when its session ends with the closed connection's error", async () => {
    const other = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${adminKey}` } },
    });
    const otherClient = new Client({ name: 'mcp-json-test-2', version: '1.0.0' });
    await otherClient.connect(other);
    const seenBefore = slowSeen;
    const pending = post(
      { jsonrpc: '2.0', id: 'ending-1', method: 'tools/call', params: slowParams },
      { 'mcp-session-id': other.sessionId ?? '' },
    );
    await until(() => slowSeen === seenBefore + 1);
    await other.terminateSession();
    const body = await (await pending).json();
    expect(body).toMatchObject({ id: 'ending-1', error: { code: -32000, message: 'Connection closed' } });
    await otherClient.close();
  });
});
