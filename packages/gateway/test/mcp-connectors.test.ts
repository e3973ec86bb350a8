import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEgressPolicy } from '@maitento/egress';
import { createGateway, type Gateway, isPreparedRequest, toolResultText } from '@maitento/gateway';
import type { Connector, FunctionBinding, JsonSchema, Tool } from '@maitento/lang';
import { waitFor } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type McpTestServer, startMcpServer } from './helpers/mcp-server.js';

// A real MCP server (the SDK's, stateful Streamable HTTP) on 127.0.0.1; the gateway's policy allows loopback.
const SECRET = 'mcp-s3cret-value-123';
const loopback = createEgressPolicy({ allow: '127.0.0.1/32' });
let upstream: McpTestServer;
let gateway: Gateway;

const REQUEST_SCHEMA: JsonSchema = {
  type: 'object',
  properties: { text: { type: 'string' }, partition: { type: 'string' }, region: { type: 'string' } },
  required: ['text', 'partition'],
  additionalProperties: false,
};

function connector(url: string, remote: string, auth: Connector['auth'] = 'Header'): Connector {
  return {
    kind: 'connector',
    name: `mcp-${remote}`,
    method: 'POST',
    url,
    mcp: { url, tool: remote },
    description: `the remote ${remote}`,
    parameters: { path: [], query: [] },
    schema: { request: REQUEST_SCHEMA },
    auth,
  };
}

function tool(remote: string, extra: Partial<Tool> = {}): Tool {
  return {
    kind: 'tool',
    name: `remote-${remote}`,
    connector: `mcp-${remote}`,
    guidance: 'test',
    bindings: { request: { partition: 'p1' }, query: {}, path: {} },
    auth: { header: 'X-Api-Key', secret: 'upstream-key' },
    requiresApproval: false,
    ...extra,
  };
}

const region: FunctionBinding = {
  name: 'region',
  function: 'remote-echo',
  target: 'region',
  type: 'request',
  required: false,
};

function callInput(remote: string, args: unknown, url = `${upstream.origin}/mcp`) {
  return {
    tool: tool(remote),
    connector: connector(url, remote),
    arguments: args,
    credential: { header: 'X-Api-Key', value: SECRET },
  };
}

beforeAll(async () => {
  upstream = await startMcpServer({ pageSize: 4, fillers: 7 });
  gateway = createGateway({ policy: loopback, timeoutMs: 3_000 });
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

describe('listMcpTools', () => {
  it('pages through tools/list (14 tools, 4 a page) and closes its session', async () => {
    const before = upstream.received.length;
    const deletedBefore = upstream.deleted;
    const tools = await gateway.listMcpTools(
      { url: `${upstream.origin}/mcp` },
      { credential: { header: 'X-Api-Key', value: SECRET } },
    );
    expect(tools.map((t) => t.name)).toEqual([
      'echo',
      'fail',
      'slow',
      'image',
      'structured',
      'big',
      'huge',
      ...Array.from({ length: 7 }, (_, i) => `extra-${i}`),
    ]);
    expect(tools[0]).toEqual({
      name: 'echo',
      description: 'Echoes its arguments and headers',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    });
    expect(tools[3].description).toBeUndefined();
    const lists = upstream.received.slice(before).filter((r) => r.method === 'POST');
    // initialize, initialized, 4 pages of 4 (14 tools).
    expect(lists.length).toBe(6);
    // The secret on every request of the session; no GET stream opened; the session ended with a DELETE.
    expect(upstream.received.slice(before).every((r) => r.headers['x-api-key'] === SECRET)).toBe(true);
    expect(upstream.received.slice(before).some((r) => r.method === 'GET')).toBe(false);
    await waitFor(
      () => upstream.deleted,
      (deleted) => deleted === deletedBefore + 1,
      { timeoutMs: 3_000, intervalMs: 20 },
    );
  });

  it('refuses a private address with the default policy, before anything is sent', async () => {
    const strict = createGateway({ policy: createEgressPolicy({}) });
    const before = upstream.received.length;
    try {
      await expect(strict.listMcpTools({ url: `${upstream.origin}/mcp` })).rejects.toMatchObject({
        code: 'api:connectors:address-blocked',
      });
      expect(upstream.received.length).toBe(before);
    } finally {
      await strict.close();
    }
  });

  it('a closed port is api:gateway:upstream-unreachable', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    await expect(gateway.listMcpTools({ url: `http://127.0.0.1:${port}/mcp` })).rejects.toMatchObject({
      code: 'api:gateway:upstream-unreachable',
    });
  });

  it('an endpoint that does not speak MCP is api:gateway:mcp-error, without the secret in the message', async () => {
    const html: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<html>${SECRET}</html>`);
    });
    await new Promise<void>((resolve) => html.listen(0, '127.0.0.1', resolve));
    try {
      const port = (html.address() as AddressInfo).port;
      const error = await gateway
        .listMcpTools({ url: `http://127.0.0.1:${port}/mcp` }, { credential: { header: 'X-Api-Key', value: SECRET } })
        .then(
          () => undefined,
          (e: unknown) => e as { code: string; message: string },
        );
      expect(error?.code).toBe('api:gateway:mcp-error');
      expect(error?.message).toContain('initialize');
      expect(error?.message).not.toContain(SECRET);
    } finally {
      await new Promise<void>((resolve) => html.close(() => resolve()));
    }
  });

  it('an HTTP error status of the server is api:gateway:upstream-status', async () => {
    await expect(gateway.listMcpTools({ url: `${upstream.origin}/not-mcp` })).rejects.toMatchObject({
      code: 'api:gateway:upstream-status',
    });
  });
});

describe('a call of a tool on an MCP connector', () => {
  it('sends one tools/call with the bindings merged; the secret reaches the server and comes back masked', async () => {
    const callsBefore = upstream.calls.length;
    const result = await gateway.call({
      ...callInput('echo', { request: { text: 'hello' } }),
      runBindings: [{ binding: region, value: 'eu' }],
    });
    expect(result.ok, JSON.stringify(result)).toBe(true);
    expect(result.status).toBe(200);
    expect(upstream.calls.slice(callsBefore)).toEqual([
      { name: 'echo', arguments: { text: 'hello', partition: 'p1', region: 'eu' } },
    ]);
    expect(JSON.parse(result.body as string)).toEqual({
      arguments: { text: 'hello', partition: 'p1', region: 'eu' },
      apiKey: '[secret]',
    });
    expect(JSON.stringify(result)).not.toContain(SECRET);
    expect(upstream.received.at(-1)?.headers['x-api-key']).toBe(SECRET);
  });

  it('refuses arguments that do not match the schema, and a bound field, before anything is sent', async () => {
    const before = upstream.received.length;
    const bad = await gateway.call(callInput('echo', { request: { text: 42 } }));
    expect(bad.code).toBe('api:gateway:request-invalid');
    const bound = await gateway.call(callInput('echo', { request: { text: 'x', partition: 'other' } }));
    expect(bound.code).toBe('api:gateway:argument-bound');
    expect(upstream.received.length).toBe(before);
  });

  it('an isError result is a failed call with api:gateway:mcp-tool-error and the remote text', async () => {
    const result = await gateway.call(callInput('fail', { request: { text: 'order 42' } }));
    expect(result.ok).toBe(false);
    expect(result.code).toBe('api:gateway:mcp-tool-error');
    expect(result.body).toBe('the order 42 does not exist');
    expect(JSON.parse(toolResultText(result))).toMatchObject({
      code: 'api:gateway:mcp-tool-error',
      body: 'the order 42 does not exist',
    });
  });

  it('a JSON-RPC error (an unknown remote tool) is api:gateway:mcp-error', async () => {
    const result = await gateway.call(callInput('nope', { request: { text: 'x' } }));
    expect(result.code).toBe('api:gateway:mcp-error');
    expect(result.error).toContain('Unknown tool nope');
  });

  it('summarises non-text content, gives structuredContent as JSON, and cuts at maxResponseBytes', async () => {
    const image = await gateway.call(callInput('image', { request: { text: 'x' } }));
    expect(image.body).toBe('a chart:\n[image image/png, 1234 bytes]');
    const structured = await gateway.call(callInput('structured', { request: { text: 'x' } }));
    expect(structured.body).toEqual({ total: 3, key: '[secret]' });
    const small = createGateway({ policy: loopback, maxResponseBytes: 1_000 });
    try {
      const big = await small.call(callInput('big', { request: { text: 'x' } }));
      expect(big.ok).toBe(true);
      expect(big.truncated).toEqual({ limit: 1_000, size: 5_000 });
      expect((big.body as string).length).toBe(1_000);
      expect(toolResultText(big)).toMatch(
        /^\[The response was cut at 1000 bytes; the whole response was 5000 bytes\.\]/,
      );
    } finally {
      await small.close();
    }
  });

  it('an answer larger than the session limit (10 MiB here) fails the call with api:gateway:mcp-error', async () => {
    const result = await gateway.call(callInput('huge', { request: { text: 'x' } }));
    expect(result.code).toBe('api:gateway:mcp-error');
    expect(result.error).toContain(`larger than ${10 * 1024 * 1024} bytes`);
    // The session was dropped; the next call works on a new one.
    const next = await gateway.call(callInput('echo', { request: { text: 'after' } }));
    expect(next.ok, JSON.stringify(next)).toBe(true);
  });

  it('reuses one session for calls with the same URL and credential, and a new one for another credential', async () => {
    const fresh = createGateway({ policy: loopback });
    try {
      const before = upstream.initialized;
      await fresh.call(callInput('echo', { request: { text: 'a' } }));
      await fresh.call(callInput('echo', { request: { text: 'b' } }));
      await Promise.all([
        fresh.call(callInput('echo', { request: { text: 'c' } })),
        fresh.call(callInput('fail', { request: { text: 'd' } })),
      ]);
      expect(upstream.initialized).toBe(before + 1);
      const other = await fresh.call({
        ...callInput('echo', { request: { text: 'e' } }),
        credential: { header: 'X-Api-Key', value: 'another-key' },
      });
      expect(JSON.parse(other.body as string).apiKey).toBe('[secret]');
      expect(upstream.initialized).toBe(before + 2);
    } finally {
      await fresh.close();
    }
  });

  it('closes a session after the idle time (DELETE), and opens a new one for the next call', async () => {
    const idle = createGateway({ policy: loopback, mcp: { sessionIdleMs: 100 } });
    try {
      const initialized = upstream.initialized;
      const deleted = upstream.deleted;
      await idle.call(callInput('echo', { request: { text: 'a' } }));
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(upstream.deleted).toBe(deleted + 1);
      await idle.call(callInput('echo', { request: { text: 'b' } }));
      expect(upstream.initialized).toBe(initialized + 2);
    } finally {
      await idle.close();
    }
  });

  it('a session the server forgot (404) is replaced once, the call made on the new one', async () => {
    const fresh = createGateway({ policy: loopback });
    try {
      await fresh.call(callInput('echo', { request: { text: 'a' } }));
      const initialized = upstream.initialized;
      const calls = upstream.calls.length;
      await upstream.forgetSessions();
      const result = await fresh.call(callInput('echo', { request: { text: 'b' } }));
      expect(result.ok, JSON.stringify(result)).toBe(true);
      expect(upstream.initialized).toBe(initialized + 1);
      // Sent once: the 404 came before the server handled anything.
      expect(upstream.calls.slice(calls)).toEqual([{ name: 'echo', arguments: { text: 'b', partition: 'p1' } }]);
    } finally {
      await fresh.close();
    }
  });

  it('stops at the deadline with api:gateway:timeout and tells the server (notifications/cancelled)', async () => {
    const quick = createGateway({ policy: loopback, timeoutMs: 400 });
    try {
      const cancelled = upstream.cancelled;
      const started = Date.now();
      const result = await quick.call(callInput('slow', { request: { text: 'x' } }));
      expect(result.code).toBe('api:gateway:timeout');
      expect(Date.now() - started).toBeLessThan(2_000);
      await waitFor(
        () => upstream.cancelled,
        (n) => n > cancelled,
        { timeoutMs: 3_000, intervalMs: 20 },
      );
    } finally {
      await quick.close();
    }
  });

  it('the caller signal cancels the call (api:gateway:cancelled)', async () => {
    const controller = new AbortController();
    const pending = gateway.call({ ...callInput('slow', { request: { text: 'x' } }), signal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    const result = await pending;
    expect(result.code).toBe('api:gateway:cancelled');
  });

  it('a tool that needs approval is refused without one, nothing sent', async () => {
    const before = upstream.received.length;
    const result = await gateway.call({
      ...callInput('echo', { request: { text: 'x' } }),
      tool: tool('echo', { requiresApproval: true }),
    });
    expect(result.code).toBe('api:approvals:required');
    expect(upstream.received.length).toBe(before);
  });

  it('prepare gives a deterministic view of the URL, the remote tool and the arguments, secret masked', async () => {
    const before = upstream.received.length;
    const input = {
      ...callInput('echo', { request: { text: 'refund' } }),
      tool: tool('echo', { requiresApproval: true }),
      runBindings: [{ binding: region, value: 'eu' }],
    };
    const first = await gateway.prepare(input);
    const second = await gateway.prepare(input);
    if (!isPreparedRequest(first) || !isPreparedRequest(second)) throw new Error(JSON.stringify(first));
    expect(first.view).toEqual({
      method: 'POST',
      url: `${upstream.origin}/mcp`,
      headers: {
        'user-agent': 'Maitento/0.1',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-api-key': '[secret]',
      },
      body: { tool: 'echo', arguments: { text: 'refund', partition: 'p1', region: 'eu' } },
    });
    expect(first.method).toBe('POST');
    expect(first.url.href).toBe(`${upstream.origin}/mcp`);
    expect(first.body).toBe(second.body);
    expect(JSON.stringify([first.method, first.url, first.headers, first.body])).toBe(
      JSON.stringify([second.method, second.url, second.headers, second.body]),
    );
    // A change of the arguments changes the prepared request.
    const changed = await gateway.prepare({ ...input, arguments: { request: { text: 'other' } } });
    if (!isPreparedRequest(changed)) throw new Error('not prepared');
    expect(changed.body).not.toBe(first.body);
    expect(upstream.received.length).toBe(before);
    // With the approval, the call is made.
    const made = await gateway.callApproved(input, { hash: first.hash, consume: async () => undefined });
    expect(made.ok, JSON.stringify(made)).toBe(true);
  });

  it('a private address is refused with the default policy, nothing sent', async () => {
    const strict = createGateway({ policy: createEgressPolicy({}) });
    const before = upstream.received.length;
    try {
      const result = await strict.call(callInput('echo', { request: { text: 'x' } }));
      expect(result.code).toBe('api:connectors:address-blocked');
      expect(upstream.received.length).toBe(before);
    } finally {
      await strict.close();
    }
  });
});
