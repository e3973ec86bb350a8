import type { Agent, Connector, HttpMethod, Tool, ToolDefinition } from '@maitento/lang';
import { listTools, type StoredVersion, storeErrors } from '@maitento/store';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { serverErrors } from '../errors.js';
import type { ServerContext } from '../server/context.js';

/** What one MCP endpoint serves: every tool of the namespace, or one agent's functions. */
export interface McpScope {
  namespace: string;
  /** The agent of `/mcp/agents/{name}`; undefined for `/mcp`. */
  agent?: string;
}

/** One tool as an MCP client sees it, and the version a call of it uses. */
export interface McpToolEntry {
  definition: ToolDefinition;
  requiresApproval: boolean;
  /** The HTTP method of the tool's connector (POST for a remote MCP server's tool). */
  method: HttpMethod;
  name: string;
  /** The pinned version (an agent's); undefined for the latest. */
  version?: number;
  /** The MCP `outputSchema`: the connector's `schema.response` when it describes an object (see {@link outputSchemaOf}). */
  outputSchema?: McpOutputSchema;
}

/** An MCP tool's `outputSchema`: a JSON Schema whose root is an object (the protocol's requirement). */
export type McpOutputSchema = { type: 'object'; [key: string]: unknown };

/**
 * A tool's MCP `outputSchema`: its connector's `schema.response` as declared, when it only admits objects (MCP's
 * `structuredContent` is a JSON object, so only such a schema can describe it): its root says `type: "object"`,
 * or it has no root `type` and one of its `allOf` does (as `mt import openapi` writes a composed response), and
 * then `type: "object"` is added at the root, which admits exactly the same values. Otherwise none, and the tool's
 * results are text only (docs/mcp.md).
 */
export function outputSchemaOf(connector: Pick<Connector, 'schema'>): McpOutputSchema | undefined {
  const schema = connector.schema.response as { type?: unknown; allOf?: unknown } | undefined;
  if (schema === undefined || typeof schema !== 'object' || schema === null) return undefined;
  if (schema.type === 'object') return schema as McpOutputSchema;
  const objectPart = (part: unknown) =>
    typeof part === 'object' && part !== null && (part as { type?: unknown }).type === 'object';
  if (schema.type === undefined && Array.isArray(schema.allOf) && schema.allOf.some(objectPart)) {
    return { ...schema, type: 'object' };
  }
  return undefined;
}

/**
 * The latest version of the agent of `scope`, or `api:agents:not-found`: read through the store cache (the store's
 * `getAnyVersion`, kept until a deploy, a disable or an enable moves the cache's epoch), as a call's tool and
 * connector versions are. Read on every `tools/call` of `/mcp/agents/{name}` (the pins name the tool's version), so
 * not a database round trip a call (docs/decisions/0042-mcp-a-calls-per-request-work.md).
 */
export async function loadAgent(ctx: ServerContext, namespace: string, name: string): Promise<StoredVersion<Agent>> {
  const agent = await ctx.cache.findVersion<Agent>(namespace, 'agent', name);
  if (agent === undefined) throw serverErrors.create('api:agents:not-found', { name, version: '', suggestion: '' });
  return agent;
}

async function entry(ctx: ServerContext, namespace: string, name: string, version?: number): Promise<McpToolEntry> {
  const stored = await ctx.cache.getVersion(namespace, 'tool', name, version);
  // The connector version the tool version pins, as a call resolves it (its method is the tool's contract).
  const pin = stored.pins.find((p) => p.kind === 'connector');
  const connector = await ctx.cache.getVersion(
    namespace,
    'connector',
    pin?.name ?? stored.resource.connector,
    pin?.version,
  );
  // Every deployed tool version has its definition; a missing one would be a store bug, so it is not listed.
  const outputSchema = outputSchemaOf(connector.resource);
  return {
    definition: stored.definition as ToolDefinition,
    requiresApproval: stored.resource.requiresApproval,
    method: connector.resource.method,
    name: stored.name,
    ...(version === undefined ? {} : { version }),
    ...(outputSchema === undefined ? {} : { outputSchema }),
  };
}

/**
 * The tools of `scope`: for `/mcp` the latest version of every tool of the namespace that can be called (a
 * disabled latest version, or its disabled connector version, leaves the tool out, as a call would be
 * refused); for an agent, the tool versions its latest version pins, in its order, as its model sees them.
 */
export async function listScopeTools(ctx: ServerContext, scope: McpScope): Promise<McpToolEntry[]> {
  if (scope.agent === undefined) {
    const tools = await listTools(ctx.db, scope.namespace);
    const entries = await Promise.all(
      tools.filter((t) => t.callable).map((t) => entry(ctx, scope.namespace, t.name, t.latestVersion)),
    );
    return entries.filter((e) => e.definition).map(({ version: _latest, ...rest }) => rest);
  }
  const agent = await loadAgent(ctx, scope.namespace, scope.agent);
  const pins = agent.pins.filter((p) => p.kind === 'tool');
  const entries = await Promise.all(pins.map((p) => entry(ctx, scope.namespace, p.name, p.version)));
  return entries.filter((e) => e.definition);
}

/** A tool version and the connector version it pins, as a call uses them. */
export type LoadedTool = { tool: StoredVersion<Tool>; connector: StoredVersion<Connector> };

/** A tool of `scope` by the name its client sees, loaded for a call (disabled versions refused). */
export async function loadScopeTool(ctx: ServerContext, scope: McpScope, name: string): Promise<LoadedTool> {
  if (scope.agent === undefined) return ctx.cache.loadCallableTool(scope.namespace, name);
  const agent = await loadAgent(ctx, scope.namespace, scope.agent);
  const pin = agent.pins.find((p) => p.kind === 'tool' && p.name === name);
  if (pin === undefined) throw storeErrors.create('api:extops:not-found', { name, version: '', suggestion: '' });
  return ctx.cache.loadCallableTool(scope.namespace, name, pin.version);
}

/** A tool's display name, from its name: `refund-order` is "Refund order". */
export function toolTitle(name: string): string {
  const words = name.replace(/[-_.]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * A tool's MCP annotations, from its contract: a GET only reads; a call that needs a person's approval, or a
 * DELETE, may destroy; GET, PUT and DELETE may be repeated with the same effect; every tool reaches an outside API.
 */
export function toolAnnotations(entry: Pick<McpToolEntry, 'method' | 'requiresApproval'>): ToolAnnotations {
  return {
    readOnlyHint: entry.method === 'GET',
    destructiveHint: entry.requiresApproval || entry.method === 'DELETE',
    idempotentHint: entry.method === 'GET' || entry.method === 'PUT' || entry.method === 'DELETE',
    openWorldHint: true,
  };
}
