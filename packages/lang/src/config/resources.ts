import type * as wire from '@maitento/sdk/wire';

/** Any JSON value. */
export type Json = wire.Json;

/** A JSON Schema, kept as the JSON it was written as. */
export type JsonSchema = { [key: string]: Json } | boolean;

/** The resource kinds of a config repo. */
export type ResourceKind = Resource['kind'];

/** HTTP methods a connector may use. */
export type HttpMethod = Connector['method'];

/** Types of a path or query parameter. */
export type ParameterType = ConnectorParameter['type'];

// The resources as the compiler makes them are the wire's shapes, declared once as TypeBox schemas in
// @maitento/sdk (packages/sdk/src/wire/schemas.ts, where each field is described); their parts are named here by
// indexed access into them, so the compiler and the wire cannot differ.

/** A schedule (`schedules/<name>.mtr`): an interaction started at every tick of a cron expression. */
export type Schedule = wire.Schedule;

/** A trigger (`triggers/<name>.mtr`): an inbound webhook that starts a run of an interaction. */
export type Trigger = wire.Trigger;

/** An OAuth 2 authorization server end users connect their accounts at (`auth-providers/<name>.mtr`). */
export type AuthProvider = wire.AuthProvider;

/** How an auth provider's client authenticates at its token endpoint. */
export type TokenAuthMethod = wire.TokenAuthMethod;

/**
 * The call itself: an HTTP endpoint (`connectors/open-api/<name>.mtr`), or a remote MCP server's tool
 * (`connectors/mcp/<name>.mtr`: `mcp` set, `method` "POST", `url` the server's endpoint, no parameters, and
 * `schema.request` the remote tool's input schema once a deploy has listed it).
 */
export type Connector = wire.Connector;

/** A path, query or header parameter of a connector. */
export type ConnectorParameter = Connector['parameters']['path'][number];

/** How a connector authenticates. */
export type ConnectorAuth = Connector['auth'];

/** The remote MCP server's tool that an MCP connector calls (`connectors/mcp/<name>.mtr`). */
export type McpTarget = NonNullable<Connector['mcp']>;

/** What a deploy learned of an MCP connector's remote tool from the server's `tools/list`. */
export interface RemoteTool {
  description?: string;
  inputSchema: JsonSchema;
}

/** What the model sees and calls (`external-operations/open-api/<name>.mtr`). */
export type Tool = wire.Tool;

/** A tool's own credential: the named secret's value is sent in `header`. */
export type ToolAuth = NonNullable<Tool['auth']>;

/** An agent (`agents/<name>.mtr`). */
export type Agent = wire.Agent;

/**
 * A function given to an agent: a tool (`{ ref = @ref("tool") }`), or another agent it may hand a task to
 * (`{ agent = @ref("agent") }`: the model sees it as a tool taking one `task` string, described by its `summary`).
 */
export type AgentFunction = Agent['functions'][number];

/** An interaction: one-shot (`interactions/one-shot/<name>.mtr`) or a conversation (`interactions/conversation/`). */
export type Interaction = wire.Interaction;

/** A prompt input of an interaction, used by `%%name%%` placeholders. */
export type PromptInput = Interaction['inputs']['prompts'][number];

/** A run input written straight into a tool call (`inputs.functions.binding`). */
export type FunctionBinding = Interaction['inputs']['functions']['binding'][number];

/** Where a run-input binding writes its value. */
export type BindingType = FunctionBinding['type'];

/** A run input carrying a secret's id (`inputs.functions.auth`). */
export type FunctionAuth = Interaction['inputs']['functions']['auth'][number];

/** A tool handed to every agent of an interaction (`functions.openApi`). */
export type OpenApiFunction = Interaction['functions']['openApi'][number];

/** Any resource. */
export type Resource = wire.Resource;

/**
 * The model-facing definition of a tool: exactly what a model is sent. `parameters` is a JSON Schema
 * object `{ request?: {...}, additionalInputs?: {...} }` holding only the fields the model fills,
 * every field required, optional ones nullable, `additionalProperties: false` throughout.
 */
export type ToolDefinition = wire.ToolDefinition;
