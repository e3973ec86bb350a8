import { isDeepStrictEqual } from 'node:util';
import { type AuthorizationNeed, connectionCredential } from '@maitento/engine';
import { isMtError } from '@maitento/errors';
import type { AuthProvider, CompiledRepo, Connector, Diagnostic, RemoteTool } from '@maitento/lang';
import { didYouMean } from '@maitento/lang';
import { getVersion, type StoredVersion } from '@maitento/store';
import { serverErrors } from '../errors.js';
import type { ServerContext } from '../server/context.js';
import { tokenDeps } from './connection-for-call.js';

/** MCP servers listed at once by one deploy. */
const PARALLEL_LISTINGS = 4;

/** The schema of an OAuth2 MCP connector's tool whose server was not listed: any JSON object (decision 0285). */
const OPEN_OBJECT = { type: 'object' };

/** The remote tools of a deploy, and its warnings (an OAuth2 MCP tool whose schema could not be read). */
export interface RemoteToolsListed {
  tools: Map<string, RemoteTool>;
  warnings: Diagnostic[];
}

/**
 * The remote tool of every MCP connector of a compiled repo, by connector name: the deploy lists each
 * server's tools through the gateway (the egress policy judges the address and every connection, no redirect
 * leaves the origin), with the secret of a tool on the connector (the first by name that names one; the
 * connector itself names none). A server that cannot be listed, or lacks the named tool, refuses the deploy.
 *
 * An OAuth2 connector (decision 0390) is listed with a token used for the listing only: a client credentials
 * connector's own token, else the connection of the end user the deployer names (`endUser`, `mt deploy --end-user`),
 * which must be usable. Without either, the schema read by an earlier deploy of the same server and tool is kept;
 * never read, the tool takes any JSON object and the deploy warns.
 */
export async function listRemoteTools(
  ctx: ServerContext,
  namespace: string,
  compiled: CompiledRepo,
  endUser?: string,
): Promise<RemoteToolsListed> {
  const found = new Map<string, RemoteTool>();
  const warnings: Diagnostic[] = [];
  const connectors: Array<{ connector: Connector; credential?: { header: string; value: string } }> = [];
  for (const connector of compiled.connectors) {
    if (connector.mcp === undefined) continue;
    if (connector.auth !== 'OAuth2') {
      connectors.push({ connector });
      continue;
    }
    const value = await oauth2Token(ctx, namespace, compiled, connector, endUser);
    if (value !== undefined) {
      // Sent as `Bearer <token>` and masked as the token itself in any error (gateway headerAuth).
      connectors.push({ connector, credential: { header: 'Authorization', value } });
      continue;
    }
    const kept = await schemaReadBefore(ctx, namespace, connector);
    found.set(connector.name, kept ?? { inputSchema: structuredClone(OPEN_OBJECT) });
    if (kept === undefined) warnings.push(unreadWarning(compiled, connector));
  }
  let next = 0;
  const worker = async () => {
    while (next < connectors.length) {
      const { connector, credential } = connectors[next++];
      found.set(connector.name, await listOne(ctx, namespace, compiled, connector, credential));
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_LISTINGS, connectors.length) }, worker));
  return { tools: found, warnings };
}

function fileOf(compiled: CompiledRepo, connector: Connector): string {
  return compiled.sources.find((s) => s.kind === 'connector' && s.name === connector.name)?.file ?? '';
}

/**
 * The access token an OAuth2 MCP connector's server is listed with at deploy: the client's own for a client
 * credentials connector (undefined while its provider is not deployed), else the named end user's connection
 * (undefined when no one is named). The token is
 * read as a run's call reads it (refreshed first when it expired), with the provider's latest deployed version; it
 * is kept nowhere but the listing's session, which ends with it.
 */
async function oauth2Token(
  ctx: ServerContext,
  namespace: string,
  compiled: CompiledRepo,
  connector: Connector,
  endUser: string | undefined,
): Promise<string | undefined> {
  // A client credentials connector needs no person: the client's own token (kept as the connection with no end user,
  // as its calls keep it). An authorization code connector needs the person the deployer names.
  const clientCredentials = connector.grant === 'client_credentials';
  if (!clientCredentials && endUser === undefined) return undefined;
  const mcp = connector.mcp!;
  const providerName = connector.provider ?? '';
  const file = fileOf(compiled, connector);
  let provider: StoredVersion<AuthProvider> | undefined;
  try {
    provider = await getVersion(ctx.db, namespace, 'auth-provider', providerName);
  } catch {
    provider = undefined;
  }
  if (provider === undefined) {
    // The provider is new in this deploy: no connection can use it yet (a client's grant is asked for next deploy).
    if (clientCredentials) return undefined;
    throw serverErrors.create('api:deploy:mcp-not-connected', {
      connector: connector.name,
      file,
      provider: providerName,
      endUser: endUser ?? '',
      reason: 'the auth provider is not deployed yet; deploy it first',
    });
  }
  const stored: StoredVersion<Connector> = {
    name: connector.name,
    version: 0,
    enabled: true,
    createdAt: new Date().toISOString(),
    hash: '',
    resource: connector,
    pins: [{ kind: 'auth-provider', name: providerName, version: provider.version }],
    definition: null,
  };
  let need: AuthorizationNeed | undefined;
  const person = clientCredentials ? null : (endUser ?? null);
  const credential = await connectionCredential(tokenDeps(ctx, namespace), namespace, person, stored, (n) => {
    need = n;
  });
  if (credential !== undefined && 'bearer' in credential) return credential.bearer;
  if (credential !== undefined && 'failed' in credential) {
    throw serverErrors.create('api:deploy:mcp-unlisted', {
      connector: connector.name,
      file,
      url: mcp.url,
      code: credential.failed.code,
      reason: credential.failed.message,
    });
  }
  // A client without an OAuth client in this process (none configured): its schema is kept or open, as unnamed.
  if (clientCredentials) return undefined;
  const reason =
    need?.reason ??
    (credential !== undefined && 'authorization' in credential ? credential.authorization.reason : 'no token');
  throw serverErrors.create('api:deploy:mcp-not-connected', {
    connector: connector.name,
    file,
    provider: providerName,
    endUser: endUser ?? '',
    reason,
  });
}

/**
 * The remote tool an earlier deploy read for this connector (its latest version, same server, tool and provider),
 * so that a deploy naming no one keeps the schema instead of making a version that forgot it.
 */
async function schemaReadBefore(
  ctx: ServerContext,
  namespace: string,
  connector: Connector,
): Promise<RemoteTool | undefined> {
  let latest: StoredVersion<Connector>;
  try {
    latest = await getVersion(ctx.db, namespace, 'connector', connector.name);
  } catch {
    return undefined;
  }
  const before = latest.resource;
  if (
    before.mcp?.url !== connector.mcp?.url ||
    before.mcp?.tool !== connector.mcp?.tool ||
    before.auth !== 'OAuth2' ||
    before.provider !== connector.provider
  ) {
    return undefined;
  }
  const schema = before.schema?.request;
  if (schema === undefined || isDeepStrictEqual(schema, OPEN_OBJECT)) return undefined;
  return {
    ...(before.description === '' ? {} : { description: before.description }),
    inputSchema: structuredClone(schema),
  };
}

function unreadWarning(compiled: CompiledRepo, connector: Connector): Diagnostic {
  const provider = connector.provider ?? '';
  const error = serverErrors.create(
    'api:deploy:mcp-schema-unread',
    connector.grant === 'client_credentials'
      ? {
          connector: connector.name,
          why: `its auth provider ${provider} is new in this deploy`,
          fix: "Deploy again: the client's own token lists the server once the provider is deployed",
        }
      : {
          connector: connector.name,
          why: 'no end user named',
          fix: `Deploy again with mt deploy --end-user ID, naming a person connected at ${provider}`,
        },
  );
  return {
    code: error.code,
    severity: 'warning',
    message: error.message,
    file: fileOf(compiled, connector),
    line: 1,
    column: 1,
    ...(error.hint === undefined ? {} : { hint: error.hint }),
  };
}

async function listOne(
  ctx: ServerContext,
  namespace: string,
  compiled: CompiledRepo,
  connector: Connector,
  /** The credential to list with; without it, the secret of a tool on a `Header` connector. */
  given?: { header: string; value: string },
): Promise<RemoteTool> {
  const mcp = connector.mcp!;
  const file = fileOf(compiled, connector);
  const withSecret = compiled.tools
    .filter((t) => t.connector === connector.name && t.auth !== undefined)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))[0];
  let credential = given;
  if (credential === undefined && connector.auth === 'Header' && withSecret?.auth) {
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
