import type {
  Agent,
  AuthProvider,
  Connector,
  Interaction,
  Json,
  JsonSchema,
  Schedule,
  Tool,
  Trigger,
} from './resources.js';
import { resolveLocalRef } from './json-schema-dialect.js';
import type { Reporter } from './report.js';
import type { ValueTree } from './value-tree.js';

/** A resource built from a file without errors, with the tree it came from (for positions). */
export interface Built<R> {
  resource: R;
  tree: ValueTree;
}

/** The resources of one compile, by name, as the cross-resource checks see them. */
export interface CompileContext {
  reporter: Reporter;
  authProviders: Map<string, Built<AuthProvider>>;
  connectors: Map<string, Built<Connector>>;
  tools: Map<string, Built<Tool>>;
  agents: Map<string, Built<Agent>>;
  interactions: Map<string, Built<Interaction>>;
  schedules: Map<string, Built<Schedule>>;
  triggers: Map<string, Built<Trigger>>;
}

function isObject(value: Json | JsonSchema | undefined): value is { [key: string]: Json } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The names of the body fields a request schema declares, nested ones joined with `/` (`address/city`), through local
 * `$ref`s (`#/$defs/Address`, as `mt import openapi` writes a schema used more than once), each followed once a path.
 */
export function bodyFields(
  schema: JsonSchema | undefined,
  prefix = '',
  root: JsonSchema | undefined = schema,
  seen: ReadonlySet<string> = new Set(),
): string[] {
  const followed = new Set(seen);
  const resolved =
    schema === undefined ? undefined : (resolveLocalRef(root as Json, schema as Json, followed) as JsonSchema);
  if (!isObject(resolved) || !isObject(resolved.properties)) return [];
  const out: string[] = [];
  for (const [name, child] of Object.entries(resolved.properties)) {
    const field = prefix === '' ? name : `${prefix}/${name}`;
    out.push(field);
    out.push(...bodyFields(child as JsonSchema, field, root, followed));
  }
  return out;
}

/** True when two binding targets fill the same field, or one fills an object holding the other. */
export function overlaps(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}

/** What a binding of `type` may target on a connector, for checks and for "did you mean". */
export function bindableTargets(connector: Connector, type: 'request' | 'query' | 'path'): string[] {
  if (type === 'request') return bodyFields(connector.schema.request);
  return connector.parameters[type].map((p) => p.name);
}

/**
 * True when the fields a binding of `type` may fill are not known yet: the request of an MCP connector whose
 * remote tool has not been listed (`mt check`; a deploy lists it and checks the binding).
 */
export function targetsUnknown(connector: Connector, type: 'request' | 'query' | 'path'): boolean {
  return connector.mcp !== undefined && type === 'request' && connector.schema.request === undefined;
}

/** Why a binding target fills nothing on a connector. */
export function missingTargetDetail(connector: Connector, type: 'request' | 'query' | 'path', target: string): string {
  if (connector.mcp !== undefined) {
    return type === 'request'
      ? `the input schema of the MCP tool ${connector.mcp.tool} (connector ${connector.name}) has no field ${target}`
      : `the connector ${connector.name} calls the MCP tool ${connector.mcp.tool}, which has no ${type} parameters, only arguments`;
  }
  if (type === 'request') {
    return connector.schema.request === undefined
      ? `the connector ${connector.name} has no schema.request, so it sends no body`
      : `the connector ${connector.name}'s schema.request has no field ${target}`;
  }
  return `the connector ${connector.name} declares no ${type} parameter ${target}`;
}
