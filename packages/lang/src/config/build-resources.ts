import { DEFAULT_MAX_IDLE_SECONDS, DEFAULT_TRIGGER_BODY, parseDuration } from './kind-shapes.js';
import type {
  Agent,
  AuthProvider,
  BindingType,
  Connector,
  ConnectorAuth,
  ConnectorParameter,
  FunctionAuth,
  FunctionBinding,
  HttpMethod,
  Interaction,
  Json,
  JsonSchema,
  ParameterType,
  PromptInput,
  RemoteTool,
  Resource,
  ResourceKind,
  Schedule,
  Tool,
  Trigger,
} from './resources.js';
import { isTreeObject, newObject, RefValue, type TreeObject, type TreeValue } from './value-tree.js';

// These builders run only on trees that passed their kind's shape check, so values have the right types;
// they still fall back to defaults rather than trust a cast blindly.

function obj(value: TreeValue | undefined): TreeObject {
  return isTreeObject(value) ? value : newObject();
}

function list(value: TreeValue | undefined): TreeObject[] {
  return Array.isArray(value) ? value.filter(isTreeObject) : [];
}

function text(value: TreeValue | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function flag(value: TreeValue | undefined, fallback: boolean): boolean {
  return typeof value === 'boolean' ? value : fallback;
}

function ref(value: TreeValue | undefined): string | undefined {
  return value instanceof RefValue ? value.name : undefined;
}

/** Sets an own property of a plain object; `__proto__` too, which an assignment would take as the prototype. */
export function setOwn(target: { [key: string]: Json }, key: string, value: Json): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else target[key] = value;
}

/** Turns a tree value holding no references into plain JSON (with ordinary prototypes). */
export function toJson(value: TreeValue): Json {
  if (value instanceof RefValue) return value.name;
  if (Array.isArray(value)) return value.map(toJson);
  if (isTreeObject(value)) {
    const out: { [key: string]: Json } = {};
    for (const k in value) setOwn(out, k, toJson(value[k]));
    return out;
  }
  return value;
}

function jsonMap(value: TreeValue | undefined): Record<string, Json> {
  return toJson(obj(value)) as Record<string, Json>;
}

function parameters(value: TreeValue | undefined, pathDefault: boolean): ConnectorParameter[] {
  return list(value).map((p) => {
    const out: ConnectorParameter = {
      name: text(p.name) ?? '',
      required: flag(p.required, pathDefault),
      type: (text(p.type) ?? 'string') as ParameterType,
    };
    const description = text(p.description);
    if (description !== undefined) out.description = description;
    return out;
  });
}

function authProvider(name: string, root: TreeObject): AuthProvider {
  const out: AuthProvider = {
    kind: 'auth-provider',
    name,
    tokenAuthMethod: (text(root.tokenAuthMethod) ?? 'client_secret_basic') as AuthProvider['tokenAuthMethod'],
    scopes: Array.isArray(root.scopes) ? root.scopes.filter((s): s is string => typeof s === 'string') : [],
    authorizationParams: {},
    refresh: flag(root.refresh, true),
  };
  const params = obj(root.authorizationParams);
  for (const key in params) {
    const value = params[key];
    if (typeof value === 'string') setOwn(out.authorizationParams as { [key: string]: Json }, key, value);
  }
  optional(out, 'issuer', text(root.issuer));
  optional(out, 'authorizationUrl', text(root.authorizationUrl));
  optional(out, 'tokenUrl', text(root.tokenUrl));
  optional(out, 'resource', text(root.resource));
  optional(out, 'clientId', text(root.clientId));
  optional(out, 'clientSecret', ref(root.clientSecret));
  return out;
}

function schedule(name: string, root: TreeObject): Schedule {
  return {
    kind: 'schedule',
    name,
    interaction: ref(root.interaction) ?? '',
    inputs: jsonMap(root.inputs),
    cron: (text(root.cron) ?? '').trim(),
    timezone: text(root.timezone) ?? 'UTC',
    overlap: (text(root.overlap) ?? 'skip') as Schedule['overlap'],
    missed: (text(root.missed) ?? 'skip') as Schedule['missed'],
    enabled: flag(root.enabled, true),
  };
}

function trigger(name: string, root: TreeObject): Trigger {
  const inputs: Trigger['inputs'] = {};
  const given = obj(root.inputs);
  for (const key in given) {
    const entry = obj(given[key]);
    const value: { pointer: string; default?: Json } = { pointer: text(entry.pointer) ?? '' };
    if (entry.default !== undefined) value.default = toJson(entry.default);
    setOwn(inputs as unknown as { [key: string]: Json }, key, value as unknown as Json);
  }
  const out: Trigger = {
    kind: 'trigger',
    name,
    interaction: ref(root.interaction) ?? '',
    inputs,
    maxBodyBytes: typeof root.maxBodyBytes === 'number' ? root.maxBodyBytes : DEFAULT_TRIGGER_BODY,
    enabled: flag(root.enabled, true),
  };
  // An inbound webhook, or (`on`) another interaction's run ending: schedule-checks.ts reports neither or both.
  if (root.verify !== undefined) {
    const verify = obj(root.verify);
    const tolerance = text(verify.tolerance);
    out.verify = {
      style: (text(verify.style) ?? 'standard-webhooks') as NonNullable<Trigger['verify']>['style'],
      secret: ref(verify.secret) ?? '',
      toleranceSeconds: (tolerance && parseDuration(tolerance)) || 300,
    };
  }
  if (root.on !== undefined) {
    const on = obj(root.on);
    const statuses = Array.isArray(on.status)
      ? on.status.filter((s): s is 'Completed' | 'Failed' => s === 'Completed' || s === 'Failed')
      : [];
    out.on = { runCompleted: ref(on.runCompleted) ?? '', statuses: statuses.length === 0 ? ['Completed'] : statuses };
  }
  optional(out, 'eventId', text(root.eventId));
  return out;
}

function connector(name: string, root: TreeObject): Connector {
  const params = obj(root.parameters);
  const header = parameters(params.header, false);
  const schemaNode = obj(root.schema);
  const schema: Connector['schema'] = {};
  if (schemaNode.request !== undefined) schema.request = toJson(schemaNode.request) as JsonSchema;
  if (schemaNode.response !== undefined) schema.response = toJson(schemaNode.response) as JsonSchema;
  return {
    kind: 'connector',
    name,
    method: (text(root.method) ?? 'GET') as HttpMethod,
    url: text(root.url) ?? '',
    description: text(root.description) ?? '',
    parameters: {
      path: parameters(params.path, true),
      query: parameters(params.query, false),
      ...(header.length > 0 ? { header } : {}),
    },
    schema,
    auth: (text(root.auth) ?? 'None') as ConnectorAuth,
    // Only with OAuth2 (checked in connector-checks.ts): a connector without them keeps its content and hash.
    ...oauth2(root),
    ...limitOf(root),
  };
}

/** A tool's or a connector's `limit`, only when written: without one, the content (and version hash) is as before. */
function limitOf(root: TreeObject): { limit?: NonNullable<Tool['limit']> } {
  if (!isTreeObject(root.limit)) return {};
  const limit: NonNullable<Tool['limit']> = countsOf(root.limit);
  const { perKey, perEndUser, onLimit } = root.limit;
  if (isTreeObject(perKey)) limit.perKey = countsOf(perKey);
  if (isTreeObject(perEndUser)) limit.perEndUser = countsOf(perEndUser);
  if (onLimit === 'wait' || onLimit === 'fail') limit.onLimit = onLimit;
  return { limit };
}

/** An interaction's limit on starting runs, only when written (its counts as written: interaction-checks.ts checks them). */
function startLimitOf(root: TreeObject): Interaction['limit'] {
  if (!isTreeObject(root.limit)) return undefined;
  const limit: NonNullable<Interaction['limit']> = {};
  // As written, a count missing too: the checks report it, and a resource with errors is never deployed.
  type Counts = NonNullable<NonNullable<Interaction['limit']>['perKey']>;
  const { perKey, perEndUser } = root.limit;
  if (isTreeObject(perKey)) limit.perKey = countsOf(perKey) as Counts;
  if (isTreeObject(perEndUser)) limit.perEndUser = countsOf(perEndUser) as Counts;
  return limit;
}

/** The counts of a limit (or of its `perKey` / `perEndUser`): calls per window, calls in flight. */
function countsOf(tree: TreeObject): { calls?: number; per?: string; inFlight?: number } {
  const out: { calls?: number; per?: string; inFlight?: number } = {};
  const { calls, per, inFlight } = tree;
  if (typeof calls === 'number') out.calls = calls;
  if (typeof per === 'string') out.per = per;
  if (typeof inFlight === 'number') out.inFlight = inFlight;
  return out;
}

function oauth2(root: TreeObject): Pick<Connector, 'provider' | 'scopes' | 'grant'> {
  const provider = ref(root.provider);
  const out: Pick<Connector, 'provider' | 'scopes' | 'grant'> = {};
  if (provider !== undefined) out.provider = provider;
  if (Array.isArray(root.scopes)) out.scopes = root.scopes.filter((s): s is string => typeof s === 'string');
  const grant = text(root.grant);
  if (grant !== undefined) out.grant = grant as NonNullable<Connector['grant']>;
  return out;
}

/**
 * An MCP connector: a POST to the server's endpoint, no parameters, and the remote tool's input schema as
 * `schema.request` once a deploy has listed it (`remote`). The key order is the one of an HTTP connector, so
 * the content (and the version hash) does not depend on where the values came from.
 */
function mcpConnector(name: string, root: TreeObject, remote: RemoteTool | undefined): Connector {
  const url = text(root.url) ?? '';
  const schema: Connector['schema'] = {};
  if (remote !== undefined) schema.request = structuredClone(remote.inputSchema);
  return {
    kind: 'connector',
    name,
    method: 'POST',
    url,
    mcp: { url, tool: text(root.tool) ?? '' },
    description: text(root.description) ?? remote?.description ?? '',
    parameters: { path: [], query: [] },
    schema,
    auth: (text(root.auth) ?? 'None') as ConnectorAuth,
    ...oauth2(root),
    ...limitOf(root),
  };
}

function tool(name: string, root: TreeObject): Tool {
  const bindings = obj(root.bindings);
  const out: Tool = {
    kind: 'tool',
    name,
    connector: ref(root.connector) ?? '',
    guidance: text(root.guidance) ?? '',
    bindings: { request: jsonMap(bindings.request), query: jsonMap(bindings.query), path: jsonMap(bindings.path) },
    requiresApproval: flag(root.requiresApproval, false),
  };
  if (isTreeObject(root.auth)) out.auth = { header: text(root.auth.header) ?? '', secret: ref(root.auth.secret) ?? '' };
  if (isTreeObject(root.approval)) {
    // Only what is written: a tool without a policy keeps its content (and version hash) as before.
    const policy: NonNullable<Tool['approval']> = {};
    const { approvers, count, excludeStarter } = root.approval;
    if (Array.isArray(approvers)) policy.approvers = approvers.filter((a): a is string => typeof a === 'string');
    if (typeof count === 'number') policy.count = count;
    if (typeof excludeStarter === 'boolean') policy.excludeStarter = excludeStarter;
    out.approval = policy;
  }
  Object.assign(out, limitOf(root));
  return out;
}

function agent(name: string, root: TreeObject): Agent {
  const out: Agent = {
    kind: 'agent',
    name,
    model: text(root.model) ?? '',
    instructions: text(root.instructions) ?? '',
    functions: list(root.functions).map((f) =>
      f.agent !== undefined && f.ref === undefined ? { agent: ref(f.agent) ?? '' } : { ref: ref(f.ref) ?? '' },
    ),
  };
  const summary = text(root.summary);
  if (summary !== undefined) out.summary = summary;
  return out;
}

function optional<T extends object>(target: T, key: keyof T & string, value: unknown): void {
  if (value !== undefined) Object.assign(target, { [key]: value });
}

function interaction(name: string, root: TreeObject, conversation: boolean): Interaction {
  const agentNode = obj(root.agent);
  const inputs = obj(root.inputs);
  const inputFunctions = obj(inputs.functions);
  const prompts = list(inputs.prompts).map((p) => {
    const out: PromptInput = { name: text(p.name) ?? '', required: flag(p.required, false) };
    optional(out, 'description', text(p.description));
    optional(out, 'default', text(p.default));
    return out;
  });
  const binding = list(inputFunctions.binding).map((b) => {
    const out: FunctionBinding = {
      name: text(b.name) ?? '',
      function: ref(b.function) ?? '',
      target: text(b.target) ?? '',
      type: (text(b.type) ?? 'request') as BindingType,
      required: flag(b.required, false),
    };
    optional(out, 'agent', ref(b.agent));
    optional(out, 'default', b.default === undefined ? undefined : toJson(b.default));
    optional(out, 'description', text(b.description));
    return out;
  });
  const auth = list(inputFunctions.auth).map((a) => {
    const out: FunctionAuth = {
      name: text(a.name) ?? '',
      function: ref(a.function) ?? '',
      header: text(a.header) ?? 'Authorization',
      required: flag(a.required, false),
    };
    optional(out, 'agent', ref(a.agent));
    optional(out, 'secret', ref(a.secret));
    optional(out, 'description', text(a.description));
    return out;
  });
  const openApi = list(obj(root.functions).openApi).map((f) => {
    const out: { name?: string; ref: string } = { ref: ref(f.ref) ?? '' };
    optional(out, 'name', text(f.name));
    return out;
  });
  const out: Interaction = {
    kind: 'interaction',
    name,
    agent: { name: text(agentNode.name) ?? '', agent: ref(agentNode.agent) ?? '' },
    task: text(root.task) ?? '',
    inputs: { prompts, functions: { binding, auth } },
    functions: { openApi },
  };
  // Only when declared: an interaction without it keeps the JSON (and so the version) it had before.
  const result = obj(root.result);
  if (result.schema !== undefined) out.result = { schema: toJson(result.schema) as JsonSchema };
  if (isTreeObject(root.budget)) {
    const budget: NonNullable<Interaction['budget']> = {
      onExceeded: text(root.budget.onExceeded) === 'fail' ? 'fail' : 'wait',
    };
    optional(budget, 'tokens', typeof root.budget.tokens === 'number' ? root.budget.tokens : undefined);
    optional(budget, 'costUsd', typeof root.budget.costUsd === 'number' ? root.budget.costUsd : undefined);
    out.budget = budget;
  }
  const limit = startLimitOf(root);
  if (limit !== undefined) out.limit = limit;
  if (conversation) {
    const maxIdle = text(root.maxIdle);
    out.conversation = { maxIdleSeconds: (maxIdle && parseDuration(maxIdle)) || DEFAULT_MAX_IDLE_SECONDS };
  }
  return out;
}

/** How an MCP connector's file is built: given for a file of `connectors/mcp/`, with its remote tool if listed. */
export interface McpBuild {
  remote?: RemoteTool;
}

/** Builds the typed resource of a file whose tree passed its kind's shape check. */
export function buildResource(
  kind: ResourceKind,
  name: string,
  root: TreeObject,
  mcp?: McpBuild,
  conversation = false,
): Resource {
  switch (kind) {
    case 'auth-provider':
      return authProvider(name, root);
    case 'connector':
      return mcp ? mcpConnector(name, root, mcp.remote) : connector(name, root);
    case 'tool':
      return tool(name, root);
    case 'agent':
      return agent(name, root);
    case 'interaction':
      return interaction(name, root, conversation);
    case 'schedule':
      return schedule(name, root);
    case 'trigger':
      return trigger(name, root);
  }
}
