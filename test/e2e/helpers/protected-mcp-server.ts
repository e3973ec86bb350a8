import { createServer, type IncomingMessage } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { type AuthorizationServer, freePort } from './authorization-server.js';

/** One HTTP request the protected MCP server received: its JSON-RPC method and the subject of its token (or why none). */
export interface McpRequestSeen {
  method: string;
  subject: string;
  authorization: string;
}

/** A remote MCP server that requires OAuth, started by a test: see {@link startProtectedMcpServer}. */
export interface ProtectedMcpServer {
  /** Its MCP endpoint, `http://127.0.0.1:PORT/mcp`. */
  url: string;
  /** Every request it received, in order (a test may empty it). */
  received: McpRequestSeen[];
  /** How many times its protected-resource metadata was read. */
  metadataReads(): number;
  close(): Promise<void>;
}

function methodOf(body: unknown): string {
  return typeof body === 'object' && body !== null && 'method' in body ? String(body.method) : '(batch)';
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/**
 * A remote MCP server as the MCP authorization specification has it (the SDK's own Server over Streamable HTTP on
 * 127.0.0.1): it answers 401 with `WWW-Authenticate: Bearer resource_metadata=...` to a request without a live access
 * token of `as` (the test's oidc-provider), serves its protected-resource metadata (RFC 9728) naming `as`, and for a
 * live token offers one tool, `next_meeting`, whose result names the token's subject.
 */
export async function startProtectedMcpServer(
  as: AuthorizationServer,
  /** The input schema of `next_meeting` (default: an object with an optional string `day`). */
  inputSchema: Record<string, unknown> = { type: 'object', properties: { day: { type: 'string' } } },
): Promise<ProtectedMcpServer> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const metadataUrl = `${origin}/.well-known/oauth-protected-resource/mcp`;
  const received: McpRequestSeen[] = [];
  let metadataReads = 0;
  const http = createServer((req, res) => {
    void (async () => {
      if (req.url === '/.well-known/oauth-protected-resource/mcp') {
        metadataReads++;
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            resource: `${origin}/mcp`,
            authorization_servers: [as.issuer],
            scopes_supported: ['calendar.read'],
            bearer_methods_supported: ['header'],
          }),
        );
        return;
      }
      if (!req.url?.startsWith('/mcp')) {
        res.statusCode = 404;
        res.end();
        return;
      }
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      const authorization = req.headers.authorization ?? '';
      const token = /^Bearer (.+)$/.exec(authorization)?.[1] ?? '';
      // A person's access token, or a client's own (client credentials grant), whose subject is `client:<id>`.
      const person = token === '' ? undefined : await as.provider.AccessToken.find(token);
      const client = token === '' || person !== undefined ? undefined : await as.provider.ClientCredentials.find(token);
      const found = person ?? client;
      const live = found !== undefined && !found.isExpired;
      const subjectOf = () => (person !== undefined ? String(person.accountId) : `client:${client?.clientId}`);
      received.push({ method: methodOf(body), subject: live ? subjectOf() : '(refused)', authorization });
      if (!live) {
        res.statusCode = 401;
        res.setHeader('www-authenticate', `Bearer resource_metadata="${metadataUrl}", error="invalid_token"`);
        res.end();
        return;
      }
      const subject = subjectOf();
      const server = new Server({ name: 'protected-test-mcp', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: [
          {
            name: 'next_meeting',
            description: "The signed-in person's next meeting.",
            inputSchema,
          },
        ],
      }));
      server.setRequestHandler(CallToolRequestSchema, async (request) => ({
        content: [
          {
            type: 'text',
            text: JSON.stringify({ tool: request.params.name, sub: subject, day: request.params.arguments?.day }),
          },
        ],
      }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    })().catch(() => {
      if (!res.headersSent) res.statusCode = 500;
      res.end();
    });
  });
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  return {
    url: `${origin}/mcp`,
    received,
    metadataReads: () => metadataReads,
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
