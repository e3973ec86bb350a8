import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEgressPolicy, type Resolver } from '@maitento/egress';
import { createGateway, type Gateway } from '@maitento/gateway';
import type { Connector, Tool } from '@maitento/lang';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type McpTestServer, startMcpServer } from './helpers/mcp-server.js';
import { fakeResolver } from './helpers/resolver.js';

// The MCP server on 127.0.0.1, a plain HTTP server on another port that redirects to it (another origin), and two
// names for 127.0.0.1 (another host on the same port is another origin too).
const SECRET = 'mcp-egress-secret-456';
const credential = { header: 'Authorization', value: SECRET };
const resolver = fakeResolver({ 'mcp.example.test': '127.0.0.1', 'other.example.test': '127.0.0.1' });
let upstream: McpTestServer;
let redirector: Server;
let redirectorPort: number;
const redirectorSeen: IncomingMessage['headers'][] = [];
let gateway: Gateway;

beforeAll(async () => {
  upstream = await startMcpServer();
  redirector = createServer((req, res) => {
    redirectorSeen.push(req.headers);
    res.writeHead(307, { location: `${upstream.origin}/mcp` });
    res.end();
  });
  await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
  redirectorPort = (redirector.address() as AddressInfo).port;
  gateway = createGateway({ policy: createEgressPolicy({ allow: '127.0.0.1/32' }), resolver });
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
  await new Promise<void>((resolve) => redirector.close(() => resolve()));
});

function input(url: string) {
  const connector: Connector = {
    kind: 'connector',
    name: 'mcp-echo',
    method: 'POST',
    url,
    mcp: { url, tool: 'echo' },
    description: 'echo',
    parameters: { path: [], query: [] },
    schema: { request: { type: 'object', properties: { text: { type: 'string' } } } },
    auth: 'Header',
  };
  const tool: Tool = {
    kind: 'tool',
    name: 'remote-echo',
    connector: 'mcp-echo',
    guidance: 'test',
    bindings: { request: {}, query: {}, path: {} },
    auth: { header: 'Authorization', secret: 'k' },
    requiresApproval: false,
  };
  return { tool, connector, arguments: { request: { text: 'hi' } }, credential };
}

describe('MCP sessions and redirects', () => {
  it('a redirect to another port is refused (api:gateway:mcp-redirect-refused); the credential never reaches it', async () => {
    const before = upstream.received.length;
    const error = await gateway.listMcpTools({ url: `http://127.0.0.1:${redirectorPort}/mcp` }, { credential }).then(
      () => undefined,
      (e: unknown) => e as { code: string; message: string },
    );
    expect(error?.code).toBe('api:gateway:mcp-redirect-refused');
    expect(error?.message).toContain(upstream.origin);
    expect(error?.message).not.toContain(SECRET);
    // The configured origin got the credential (as a Bearer token); the origin it redirected to got nothing.
    expect(redirectorSeen.at(-1)?.authorization).toBe(`Bearer ${SECRET}`);
    expect(upstream.received.length).toBe(before);

    const result = await gateway.call(input(`http://127.0.0.1:${redirectorPort}/mcp`));
    expect(result.code).toBe('api:gateway:mcp-redirect-refused');
    expect(JSON.stringify(result)).not.toContain(SECRET);
    expect(upstream.received.length).toBe(before);
  });

  it('a redirect to another host name on the same port is refused too', async () => {
    const before = upstream.received.length;
    upstream.redirects.set('/elsewhere', `http://other.example.test:${upstream.port}/mcp`);
    const result = await gateway.call(input(`http://mcp.example.test:${upstream.port}/elsewhere`));
    expect(result.code).toBe('api:gateway:mcp-redirect-refused');
    const seen = upstream.received.slice(before);
    expect(seen.map((r) => r.url)).toEqual(['/elsewhere']);
    expect(seen.some((r) => r.headers.host?.toString().startsWith('other.example.test'))).toBe(false);
  });

  it('a redirect within the origin is followed (method and credential kept)', async () => {
    upstream.redirects.set('/old', '/mcp');
    const before = upstream.received.length;
    const result = await gateway.call(input(`http://mcp.example.test:${upstream.port}/old`));
    expect(result.ok, JSON.stringify(result)).toBe(true);
    const posts = upstream.received.slice(before).filter((r) => r.url === '/mcp' && r.method === 'POST');
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.every((r) => r.headers.authorization === `Bearer ${SECRET}`)).toBe(true);
    expect(result.body).not.toContain(SECRET);
  });

  it('every connection is judged at connect time: a name that changes to a refused address is blocked', async () => {
    // The address check sees 127.0.0.1 (allowed); the egress agent's own lookup then gets 127.0.0.2 (not allowed).
    let answers = 0;
    const rebinding: Resolver = async () => {
      answers++;
      return [{ address: answers === 1 ? '127.0.0.1' : '127.0.0.2', family: 4 as const }];
    };
    const rebound = createGateway({ policy: createEgressPolicy({ allow: '127.0.0.1/32' }), resolver: rebinding });
    try {
      const result = await rebound.call(input(`http://rebind.example.test:${upstream.port}/mcp`));
      expect(result.code).toBe('api:connectors:address-blocked');
      expect(answers).toBeGreaterThan(1);
    } finally {
      await rebound.close();
    }
  });
});
