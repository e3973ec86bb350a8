import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

/** The parts of `@modelcontextprotocol/sdk` the gateway uses. */
export interface McpSdk {
  Client: typeof Client;
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
  StreamableHTTPError: typeof StreamableHTTPError;
  McpError: typeof McpError;
  ErrorCode: typeof ErrorCode;
}

let loading: Promise<McpSdk> | undefined;
let loaded: McpSdk | undefined;

/**
 * The SDK, imported on the first MCP call: importing `@maitento/gateway` stays light for the many processes that
 * never call an MCP server (the SDK brings zod and its schemas).
 */
export function loadSdk(): Promise<McpSdk> {
  loading ??= Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]).then(
    ([client, transport, types]) => {
      loaded = {
        Client: client.Client,
        StreamableHTTPClientTransport: transport.StreamableHTTPClientTransport,
        StreamableHTTPError: transport.StreamableHTTPError,
        McpError: types.McpError,
        ErrorCode: types.ErrorCode,
      };
      return loaded;
    },
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/** The SDK when it was loaded already (errors of a session can only come after), else undefined. */
export function loadedSdk(): McpSdk | undefined {
  return loaded;
}
