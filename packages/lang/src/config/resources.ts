/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A JSON Schema, kept as the JSON it was written as. */
export type JsonSchema = { [key: string]: Json } | boolean;

/** The four resource kinds of a config repo. */
export type ResourceKind = 'connector' | 'tool' | 'agent' | 'interaction';

/** HTTP methods a connector may use. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Types of a path or query parameter. */
export type ParameterType = 'string' | 'number' | 'integer' | 'boolean';

/** A path, query or header parameter of a connector. */
export interface ConnectorParameter {
  name: string;
  description?: string;
  /** Defaults to `true` for path parameters and `false` for query and header parameters. */
  required: boolean;
  /** Defaults to `string`. */
  type: ParameterType;
}

/** How a connector authenticates. */
export type ConnectorAuth = 'None' | 'Header' | 'Maitento';

/** The remote MCP server's tool that an MCP connector calls (`connectors/mcp/<name>.mtr`). */
export interface McpTarget {
  /** The server's Streamable HTTP endpoint (the same address rules as an HTTP connector's `url`). */
  url: string;
  /** The remote tool's name, as its `tools/list` gives it. */
  tool: string;
}

/** What a deploy learned of an MCP connector's remote tool from the server's `tools/list`. */
export interface RemoteTool {
  description?: string;
  inputSchema: JsonSchema;
}

/**
 * The call itself: an HTTP endpoint (`connectors/open-api/<name>.mtr`), or a remote MCP server's tool
 * (`connectors/mcp/<name>.mtr`: `mcp` set, `method` "POST", `url` the server's endpoint, no parameters, and
 * `schema.request` the remote tool's input schema once a deploy has listed it).
 */
export interface Connector {
  kind: 'connector';
  name: string;
  method: HttpMethod;
  url: string;
  /** Set for a connector to a remote MCP server's tool. */
  mcp?: McpTarget;
  description: string;
  /** `header` is there only when the connector declares header parameters (so no other connector's content changes). */
  parameters: { path: ConnectorParameter[]; query: ConnectorParameter[]; header?: ConnectorParameter[] };
  schema: { request?: JsonSchema; response?: JsonSchema };
  auth: ConnectorAuth;
}

/** A tool's own credential: the named secret's value is sent in `header`. */
export interface ToolAuth {
  header: string;
  /** Secret name (secrets live on the server, never in the repo). */
  secret: string;
}

/** What the model sees and calls (`external-operations/open-api/<name>.mtr`). */
export interface Tool {
  kind: 'tool';
  name: string;
  /** Name of the connector. */
  connector: string;
  guidance: string;
  /** Fixed values; `request` keys are body targets with `/` between nested names. */
  bindings: { request: Record<string, Json>; query: Record<string, Json>; path: Record<string, Json> };
  auth?: ToolAuth;
  requiresApproval: boolean;
}

/**
 * A function given to an agent: a tool (`{ ref = @ref("tool") }`), or another agent it may hand a task to
 * (`{ agent = @ref("agent") }`: the model sees it as a tool taking one `task` string, described by its `summary`).
 */
export type AgentFunction = { ref: string } | { agent: string };

/** An agent (`agents/<name>.mtr`). */
export interface Agent {
  kind: 'agent';
  name: string;
  /** `provider:model`, for example `openai:gpt-4o-mini`. */
  model: string;
  instructions: string;
  summary?: string;
  functions: AgentFunction[];
}

/** A prompt input of an interaction, used by `%%name%%` placeholders. */
export interface PromptInput {
  name: string;
  description?: string;
  required: boolean;
  default?: string;
}

/** Where a run-input binding writes its value. */
export type BindingType = 'request' | 'query' | 'path';

/** A run input written straight into a tool call (`inputs.functions.binding`). */
export interface FunctionBinding {
  /** Name of the run input. */
  name: string;
  /** Name of the tool. */
  function: string;
  /** Name of the agent whose function it is; absent for tools handed out by `functions.openApi`. */
  agent?: string;
  /** Body field (nested names joined by `/`) or parameter name. */
  target: string;
  type: BindingType;
  required: boolean;
  default?: Json;
  description?: string;
}

/** A run input carrying a secret's id (`inputs.functions.auth`). */
export interface FunctionAuth {
  name: string;
  function: string;
  agent?: string;
  /** Defaults to `Authorization`. */
  header: string;
  required: boolean;
  /** Default secret name. */
  secret?: string;
  description?: string;
}

/** A tool handed to every agent of an interaction (`functions.openApi`). */
export interface OpenApiFunction {
  name?: string;
  /** Name of the tool. */
  ref: string;
}

/** An interaction: one-shot (`interactions/one-shot/<name>.mtr`) or a conversation (`interactions/conversation/`). */
export interface Interaction {
  kind: 'interaction';
  name: string;
  agent: { name: string; agent: string };
  task: string;
  inputs: {
    prompts: PromptInput[];
    functions: { binding: FunctionBinding[]; auth: FunctionAuth[] };
  };
  functions: { openApi: OpenApiFunction[] };
  /** The shape of the final answer (`result.schema`, an object schema): absent, the answer is text. */
  result?: { schema: JsonSchema };
  /**
   * Present for a conversation (`interactions/conversation/<name>.mtr`): after each reply the run waits for the next
   * message, at most `maxIdleSeconds` (`maxIdle`, default 24 h) before it ends.
   */
  conversation?: { maxIdleSeconds: number };
}

/** Any resource. */
export type Resource = Connector | Tool | Agent | Interaction;

/**
 * The model-facing definition of a tool: exactly what a model is sent. `parameters` is a JSON Schema
 * object `{ request?: {...}, additionalInputs?: {...} }` holding only the fields the model fills,
 * every field required, optional ones nullable, `additionalProperties: false` throughout.
 */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: { [key: string]: Json };
}
