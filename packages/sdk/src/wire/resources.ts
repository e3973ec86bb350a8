// The resource types of the wire, derived from their one declaration in ./schemas.ts. @maitento/lang's
// types (packages/lang/src/config/resources.ts) are these (it imports them through `@maitento/sdk/wire`).
import type { Static } from 'typebox';
import type {
  AgentSchema,
  AuthProviderSchema,
  ConnectorSchema,
  InteractionSchema,
  ScheduleSchema,
  TriggerSchema,
  Json,
  RESOURCE_KINDS,
  ToolDefinitionSchema,
  ToolSchema,
} from './schemas.js';

export type { Json };

/** A JSON Schema, kept as the JSON it was written as. */
export type JsonSchema = { [key: string]: Json } | boolean;

/** The resource kinds of a config repo. */
export type ResourceKind = (typeof RESOURCE_KINDS)[number];

/** An OAuth 2 authorization server end users connect at (`auth-providers/<name>.mtr`). */
export type AuthProvider = Static<typeof AuthProviderSchema>;

/** How an auth provider authenticates at its token endpoint. */
export type TokenAuthMethod = AuthProvider['tokenAuthMethod'];

/** The HTTP call itself (`connectors/open-api/<name>.mtr`). */
export type Connector = Static<typeof ConnectorSchema>;

/** HTTP methods a connector may use. */
export type HttpMethod = Connector['method'];

/** A path or query parameter of a connector. */
export type ConnectorParameter = Connector['parameters']['path'][number];

/** Types of a path or query parameter. */
export type ParameterType = ConnectorParameter['type'];

/** How a connector authenticates. */
export type ConnectorAuth = Connector['auth'];

/** What the model sees and calls (`external-operations/open-api/<name>.mtr`). */
export type Tool = Static<typeof ToolSchema>;

/** A tool's own credential: the named secret's value is sent in `header`. */
export type ToolAuth = NonNullable<Tool['auth']>;

/** An agent (`agents/<name>.mtr`). */
export type Agent = Static<typeof AgentSchema>;

/** A function given to an agent. */
export type AgentFunction = Agent['functions'][number];

/** A one-shot interaction (`interactions/one-shot/<name>.mtr`). */
export type Interaction = Static<typeof InteractionSchema>;

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

/** A schedule (`schedules/<name>.mtr`). */
export type Schedule = Static<typeof ScheduleSchema>;

/** A trigger: an inbound webhook (`triggers/<name>.mtr`). */
export type Trigger = Static<typeof TriggerSchema>;

/** Any resource. */
export type Resource = AuthProvider | Connector | Tool | Agent | Interaction | Schedule | Trigger;

/** The model-facing definition of a tool: exactly what a model is sent. */
export type ToolDefinition = Static<typeof ToolDefinitionSchema>;
