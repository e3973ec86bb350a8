import { type ConnectionFlags, resolveConnection } from '../internal/connection.js';
import { CommandExit, printJson, reportError } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

/** The options of `mt mcp-config`. */
interface McpConfigFlags extends ConnectionFlags {
  agent?: string;
  name?: string;
  vscode?: boolean;
}

/** The snippet MCP hosts take to reach Maitento's MCP endpoint over Streamable HTTP. */
export function mcpConfigSnippet(options: {
  apiUrl: string;
  apiKey?: string;
  agent?: string;
  name?: string;
  vscode?: boolean;
}): Record<string, unknown> {
  const path = options.agent === undefined ? '/mcp' : `/mcp/agents/${encodeURIComponent(options.agent)}`;
  const name = options.name ?? (options.agent === undefined ? 'maitento' : `maitento-${options.agent}`);
  const server = {
    type: 'http',
    url: `${options.apiUrl}${path}`,
    headers: { Authorization: `Bearer ${options.apiKey ?? '<your API key>'}` },
  };
  // VS Code's .vscode/mcp.json names its map `servers`; Claude Code, Cursor and most others `mcpServers`.
  return options.vscode ? { servers: { [name]: server } } : { mcpServers: { [name]: server } };
}

/** `mt mcp-config [--agent NAME]`: prints the JSON snippet an MCP host takes to connect to this server. */
export const register: RegisterCommand = (program, io) => {
  program
    .command('mcp-config')
    .description('Print the JSON that MCP hosts (Claude Code, Cursor, VS Code, ...) take to use the deployed tools')
    .option('--agent <name>', "only this agent's functions (/mcp/agents/NAME) instead of every tool of the namespace")
    .option('--name <name>', 'the server entry name (default maitento, or maitento-AGENT)')
    .option('--vscode', 'the shape of VS Code (.vscode/mcp.json: "servers") instead of "mcpServers"')
    .option('--api <url>', 'the server (default: MT_API_URL, then the login file, then http://127.0.0.1:8080)')
    .option('--key <key>', 'the API key written into the snippet (default: MT_API_KEY, then the login file)')
    .option(
      '--json',
      'print the snippet as JSON on stdout (it always is: accepted as by every command that prints JSON)',
    )
    .addHelpText(
      'after',
      '\nThe snippet holds the API key: use a `runner` key (mt key-create --role runner), which runs and calls tools\n' +
        'but can never answer an approval, so the agent cannot approve its own calls; keep the file private.\n' +
        'Claude Code: .mcp.json; Cursor: .cursor/mcp.json; VS Code: .vscode/mcp.json (--vscode). See docs/mcp.md.',
    )
    .action(async (flags: McpConfigFlags) => {
      try {
        const connection = await resolveConnection(flags);
        printJson(io, mcpConfigSnippet({ ...flags, apiUrl: connection.apiUrl, apiKey: connection.apiKey }));
        if (connection.apiKey === undefined) {
          io.err('no API key is set (--key, MT_API_KEY or mt login): replace <your API key> in the snippet');
        }
      } catch (error) {
        throw new CommandExit(reportError(io, error));
      }
    });
};
