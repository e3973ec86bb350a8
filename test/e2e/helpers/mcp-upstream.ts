import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/** One tool of the local MCP server: what `tools/list` shows and what a call answers. */
export interface LocalMcpTool {
  name: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  /** The text of the answer, given the arguments and the headers of the HTTP request that carried the call (may wait). */
  answer(args: Record<string, unknown>, headers: IncomingMessage['headers']): string | Promise<string>;
}

/** A call the local MCP server received. */
export interface LocalMcpCall {
  tool: string;
  arguments: Record<string, unknown>;
  headers: IncomingMessage['headers'];
}

/** A real MCP server (the SDK's `Server` over Streamable HTTP, stateless) on 127.0.0.1. */
export interface LocalMcpServer {
  /** Its endpoint, `http://127.0.0.1:PORT/mcp`. */
  url: string;
  /** The tools it lists; replace them to change the server between deploys. */
  tools: LocalMcpTool[];
  calls: LocalMcpCall[];
  /** The `tools/list` requests it answered. */
  listings: number;
  close(): Promise<void>;
}

/** Starts a local MCP server with `tools`; each HTTP request gets a fresh stateless server, as the SDK's examples do. */
export async function startLocalMcpServer(tools: LocalMcpTool[]): Promise<LocalMcpServer> {
  const state: LocalMcpServer = { url: '', tools, calls: [], listings: 0, close: async () => {} };
  const http = createServer((req, res) => {
    if (!req.url?.startsWith('/mcp')) {
      res.statusCode = 404;
      res.end();
      return;
    }
    const server = new Server({ name: 'local-test-mcp', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => {
      state.listings++;
      return {
        tools: state.tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
      };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      state.calls.push({ tool: request.params.name, arguments: args, headers: req.headers });
      const tool = state.tools.find((t) => t.name === request.params.name);
      if (!tool) return { isError: true, content: [{ type: 'text', text: `no tool ${request.params.name}` }] };
      return { content: [{ type: 'text', text: await tool.answer(args, req.headers) }] };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    server
      .connect(transport)
      .then(() => transport.handleRequest(req, res))
      .catch(() => {
        if (!res.headersSent) res.statusCode = 500;
        res.end();
      });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  state.url = `http://127.0.0.1:${port}/mcp`;
  state.close = () =>
    new Promise<void>((resolve) => {
      http.closeAllConnections();
      http.close(() => resolve());
    });
  return state;
}
