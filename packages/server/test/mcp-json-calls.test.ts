// A plain tools/call over MCP (no task, no progress token) is answered as one JSON body; every other request keeps
// the SDK's Streamable HTTP transport (SSE for calls that may send progress). docs/mcp.md, docs/decisions.md.
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

// One raw POST on the client's session, as the SDK's client sends it.
function post(body: unknown, headers: Record<string, string> = {}) {
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
    body: JSON.stringify(body),
  });
}

beforeAll(async () => {
  upstream = createHttpServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ id: req.url?.split('/')[2], echoedKey: req.headers['x-api-key'] }));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  database = await createTestDatabase('mt_server_mcp_json');
  db = createPgDb(database.url);
  app = await createServer({
    db,
    secretKey: randomBytes(32),
    egress: createEgressPolicy({ allow: '127.0.0.1/32' }),
    resolver,
    bootstrapKey: adminKey,
    logger: false,
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
  const files = sampleFiles({ ordersUrl: `http://orders.example.test:${port}/orders/{orderId}` });
  expect((await app.inject({ method: 'POST', url: '/v1/deploy', headers, payload: { files } })).statusCode).toBe(200);
  client = new Client({ name: 'mcp-json-test', version: '1.0.0' });
  transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${adminKey}` } },
  });
  await client.connect(transport);
});

afterAll(async () => {
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
});
