import { isMtError } from '@maitento/errors';
import type { CompiledRepo, Connector, RemoteTool } from '@maitento/lang';
import { didYouMean } from '@maitento/lang';
import { serverErrors } from '../errors.js';
import type { ServerContext } from '../server/context.js';

/** MCP servers listed at once by one deploy. */
const PARALLEL_LISTINGS = 4;

/**
 * The remote tool of every MCP connector of a compiled repo, by connector name: the deploy lists each
 * server's tools through the gateway (the egress policy judges the address and every connection, no redirect
 * leaves the origin), with the secret of a tool on the connector (the first by name that names one; the
 * connector itself names none). A server that cannot be listed, or lacks the named tool, refuses the deploy.
 */
export async function listRemoteTools(
  ctx: ServerContext,
  namespace: string,
  compiled: CompiledRepo,
): Promise<Map<string, RemoteTool>> {
  const connectors = compiled.connectors.filter((c) => c.mcp !== undefined);
  const found = new Map<string, RemoteTool>();
  let next = 0;
  const worker = async () => {
    while (next < connectors.length) {
      const connector = connectors[next++];
      found.set(connector.name, await listOne(ctx, namespace, compiled, connector));
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_LISTINGS, connectors.length) }, worker));
  return found;
}

async function listOne(
  ctx: ServerContext,
  namespace: string,
  compiled: CompiledRepo,
  connector: Connector,
): Promise<RemoteTool> {
  const mcp = connector.mcp!;
  const file = compiled.sources.find((s) => s.kind === 'connector' && s.name === connector.name)?.file ?? '';
  const withSecret = compiled.tools
    .filter((t) => t.connector === connector.name && t.auth !== undefined)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))[0];
  let credential: { header: string; value: string } | undefined;
  if (connector.auth === 'Header' && withSecret?.auth) {
    const secret = await ctx.cache.readSecretValue(namespace, { name: withSecret.auth.secret });
    if (secret) credential = { header: withSecret.auth.header, value: secret.value };
  }
  let tools: Awaited<ReturnType<ServerContext['gateway']['listMcpTools']>>;
  try {
    tools = await ctx.gateway.listMcpTools({ url: mcp.url }, { credential });
  } catch (error) {
    if (!isMtError(error)) throw error;
    throw serverErrors.create('api:deploy:mcp-unlisted', {
      connector: connector.name,
      file,
      url: mcp.url,
      code: error.code,
      reason: error.message,
    });
  }
  const tool = tools.find((t) => t.name === mcp.tool);
  if (tool === undefined) {
    const names = tools.map((t) => t.name);
    const guess = didYouMean(mcp.tool, names);
    throw serverErrors.create('api:deploy:mcp-tool-missing', {
      connector: connector.name,
      file,
      url: mcp.url,
      tool: mcp.tool,
      suggestion: guess === undefined ? '' : ` (did you mean ${guess}?)`,
      known: names.slice(0, 50).join(', ') || '(none)',
    });
  }
  return {
    ...(tool.description === undefined ? {} : { description: tool.description }),
    inputSchema: tool.inputSchema,
  };
}
