import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

/** One HTTP request the MCP test server received. */
export interface McpReceived {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

/** A real MCP server (the SDK's `Server` on its Node Streamable HTTP transport, stateful) on 127.0.0.1. */
export interface McpTestServer {
  port: number;
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** Every HTTP request, in order. */
  received: McpReceived[];
  /** Sessions initialized. */
  initialized: number;
  /** DELETEs that ended a session. */
  deleted: number;
  /** `tools/call` requests handled, by remote tool name, with their arguments. */
  calls: Array<{ name: string; arguments: unknown }>;
  /** `slow` calls whose handler saw the client's cancellation. */
  cancelled: number;
  /** Sends a redirect for `path`: the handler decides where. */
  redirects: Map<string, string>;
  /** Forgets every session (as a restarted server would): their ids are answered 404. */
  forgetSessions(): Promise<void>;
  close(): Promise<void>;
}

const INPUT = { type: 'object' as const, properties: { text: { type: 'string' } } };

/** The tools: `echo` (its arguments and the x-api-key header it got), `fail` (isError), `slow`, `image`, `structured`, `big` (5 000 bytes), `huge` (11 MiB), and `extra-N` fillers. */
function toolList(fillers: number) {
  const tools = [
    { name: 'echo', description: 'Echoes its arguments and headers', inputSchema: INPUT },
    { name: 'fail', description: 'Always fails', inputSchema: INPUT },
    { name: 'slow', description: 'Waits 5 seconds', inputSchema: INPUT },
    { name: 'image', inputSchema: INPUT },
    { name: 'structured', inputSchema: INPUT },
    { name: 'big', inputSchema: INPUT },
    { name: 'huge', inputSchema: INPUT },
  ];
  for (let i = 0; i < fillers; i++) tools.push({ name: `extra-${i}`, description: `filler ${i}`, inputSchema: INPUT });
  return tools;
}

/** Starts the server; `tools/list` answers `pageSize` tools a page (with `nextCursor`). */
export async function startMcpServer(
  options: { pageSize?: number; fillers?: number; port?: number } = {},
): Promise<McpTestServer> {
  const pageSize = options.pageSize ?? 100;
  const tools = toolList(options.fillers ?? 0);
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const sockets = new Set<Socket>();
  const state: McpTestServer = {
    port: 0,
    origin: '',
    received: [],
    initialized: 0,
    deleted: 0,
    calls: [],
    cancelled: 0,
    redirects: new Map(),
    forgetSessions: async () => {
      const open = [...transports.values()];
      transports.clear();
      for (const transport of open) await transport.close().catch(() => {});
    },
    close: async () => {},
  };

  function mcpServer(): Server {
    const server = new Server({ name: 'test-upstream', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async (request) => {
      const start = request.params?.cursor === undefined ? 0 : Number(request.params.cursor);
      const end = start + pageSize;
      return { tools: tools.slice(start, end), ...(end < tools.length ? { nextCursor: String(end) } : {}) };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const { name } = request.params;
      const args = request.params.arguments ?? {};
      state.calls.push({ name, arguments: args });
      switch (name) {
        case 'echo':
          return {
            content: [
              {
                type: 'text',
                text: JSON.stringify({ arguments: args, apiKey: extra.requestInfo?.headers['x-api-key'] }),
              },
            ],
          };
        case 'fail':
          return { content: [{ type: 'text', text: 'the order 42 does not exist' }], isError: true };
        case 'slow':
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, 5_000);
            extra.signal.addEventListener('abort', () => {
              state.cancelled++;
              clearTimeout(timer);
              resolve();
            });
          });
          return { content: [{ type: 'text', text: 'slow done' }] };
        case 'image':
          return {
            content: [
              { type: 'text', text: 'a chart:' },
              { type: 'image', data: Buffer.alloc(1234).toString('base64'), mimeType: 'image/png' },
            ],
          };
        case 'structured':
          return { content: [], structuredContent: { total: 3, key: extra.requestInfo?.headers['x-api-key'] ?? null } };
        case 'big':
          return { content: [{ type: 'text', text: 'x'.repeat(5_000) }] };
        case 'huge':
          return { content: [{ type: 'text', text: 'x'.repeat(11 * 1024 * 1024) }] };
        default:
          throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${name}`);
      }
    });
    return server;
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    state.received.push({ method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers } });
    const redirect = state.redirects.get(req.url ?? '');
    if (redirect !== undefined) {
      res.writeHead(307, { location: redirect });
      res.end();
      return;
    }
    if (req.url !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const transport = transports.get(sessionId);
      if (transport === undefined) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      if (req.method === 'DELETE') state.deleted++;
      await transport.handleRequest(req, res);
      return;
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => {
        state.initialized++;
        transports.set(id, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) transports.delete(transport.sessionId);
    };
    await mcpServer().connect(transport);
    await transport.handleRequest(req, res);
  }

  const http: HttpServer = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    });
  });
  http.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => http.listen(options.port ?? 0, '127.0.0.1', resolve));
  state.port = (http.address() as AddressInfo).port;
  state.origin = `http://127.0.0.1:${state.port}`;
  state.close = async () => {
    for (const transport of transports.values()) await transport.close().catch(() => {});
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  };
  return state;
}
