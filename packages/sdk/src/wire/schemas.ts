// The wire's shapes, each declared once: a TypeBox schema is both the JSON Schema the server validates and
// serializes with (and @fastify/swagger publishes in /openapi.json) and, through `Static`, the TypeScript type.
// The server imports these, and @maitento/lang's resource types, the engine's api types and the store's answers
// are these `Static` types (each imports them from here): one declaration, nothing to keep equal.
import { type Static, type TSchema, type TUnsafe, Type } from 'typebox';
import { APPROVAL_STATUSES, RESOURCE_KINDS, RUN_EVENT_TYPES, RUN_STATUSES } from './constants.js';
import { timestamp, uuid } from './formats.js';

/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A schema that refers to a schema added with its `$id` (`{ $ref: 'Id#' }`), typed as that schema. */
export function ref<T extends TSchema>(schema: T): TUnsafe<Static<T>> {
  const id = (schema as { $id?: string }).$id;
  if (!id) throw new Error('ref() needs a schema with an $id');
  return Type.Unsafe<Static<T>>({ $ref: `${id}#` });
}

/** A string of one of `values`, as `{ type: 'string', enum }`. */
export function stringEnum<const T extends readonly string[]>(values: T) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values] });
}

const anyJson = Type.Unsafe<Json>({});
const jsonMap = Type.Unsafe<{ [key: string]: Json }>({ type: 'object', additionalProperties: true });
const unknownMap = Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true });
const nullable = <T extends TSchema>(schema: T, description?: string) =>
  Type.Union([schema, Type.Null()], description ? { description } : {});
const jsonSchema = Type.Unsafe<{ [key: string]: Json } | boolean>({});

// The plain lists (resource kinds, statuses, event types) live in ./constants.js, which loads no TypeBox: the
// SDK's `@maitento/sdk/client` entry and the CLI's commands need them without the schemas.
export {
  APPROVAL_STATUSES,
  KEY_ROLES,
  RESOURCE_KINDS,
  RUN_EVENT_TYPES,
  RUN_STATUSES,
  TERMINAL_EVENT_TYPES,
  TERMINAL_RUN_STATUSES,
} from './constants.js';

// Diagnostics and errors.

/** One finding about a config repo, with a precise (1-based) position. */
export const DiagnosticSchema = Type.Object(
  {
    code: Type.String(),
    severity: stringEnum(['error', 'warning']),
    message: Type.String(),
    file: Type.String(),
    line: Type.Integer(),
    column: Type.Integer(),
    endLine: Type.Optional(Type.Integer()),
    endColumn: Type.Optional(Type.Integer()),
    hint: Type.Optional(Type.String()),
  },
  { $id: 'Diagnostic' },
);

/** Every error body: a message, a stable code, and for a refused deploy its diagnostics. */
export const ErrorSchema = Type.Object(
  { error: Type.String(), code: Type.String(), diagnostics: Type.Optional(Type.Array(ref(DiagnosticSchema))) },
  { $id: 'Error', description: 'Every error: a message, a stable code, and for a refused deploy its diagnostics' },
);

// Resources, as @maitento/lang compiles them.

const parameter = Type.Object({
  name: Type.String(),
  description: Type.Optional(Type.String()),
  required: Type.Boolean(),
  type: stringEnum(['string', 'number', 'integer', 'boolean']),
});

/** A connector: the HTTP call itself, or (with `mcp`) a remote MCP server's tool. */
export const ConnectorSchema = Type.Object(
  {
    kind: stringEnum(['connector']),
    name: Type.String(),
    method: stringEnum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']),
    url: Type.String(),
    mcp: Type.Optional(Type.Object({ url: Type.String(), tool: Type.String() })),
    description: Type.String(),
    parameters: Type.Object({
      path: Type.Array(parameter),
      query: Type.Array(parameter),
      header: Type.Optional(Type.Array(parameter)),
    }),
    schema: Type.Object({ request: Type.Optional(jsonSchema), response: Type.Optional(jsonSchema) }),
    auth: stringEnum(['None', 'Header', 'Maitento']),
  },
  { $id: 'Connector' },
);

/** A tool: what the model sees and calls. */
export const ToolSchema = Type.Object(
  {
    kind: stringEnum(['tool']),
    name: Type.String(),
    connector: Type.String(),
    guidance: Type.String(),
    bindings: Type.Object({ request: jsonMap, query: jsonMap, path: jsonMap }),
    // The secret's name only; its value never leaves the store.
    auth: Type.Optional(Type.Object({ header: Type.String(), secret: Type.String() })),
    requiresApproval: Type.Boolean(),
    approval: Type.Optional(
      Type.Object(
        {
          approvers: Type.Optional(
            Type.Array(Type.String(), { description: 'Who may answer: key roles and/or API key ids' }),
          ),
          count: Type.Optional(Type.Integer({ minimum: 1, description: 'How many distinct approvers are needed' })),
          excludeStarter: Type.Optional(
            Type.Boolean({ description: "true: the key that started the run's tree may not answer" }),
          ),
        },
        { description: "The tool's approval policy (docs/roles.md)" },
      ),
    ),
  },
  { $id: 'Tool' },
);

/** An agent. */
export const AgentSchema = Type.Object(
  {
    kind: stringEnum(['agent']),
    name: Type.String(),
    model: Type.String(),
    instructions: Type.String(),
    summary: Type.Optional(Type.String()),
    functions: Type.Array(
      Type.Union([
        Type.Object({ ref: Type.String({ description: 'A tool the agent may call' }) }),
        Type.Object({ agent: Type.String({ description: 'An agent it may hand a task to (agents as tools)' }) }),
      ]),
    ),
  },
  { $id: 'Agent' },
);

const bindingType = stringEnum(['request', 'query', 'path']);

/** A one-shot interaction. */
export const InteractionSchema = Type.Object(
  {
    kind: stringEnum(['interaction']),
    name: Type.String(),
    agent: Type.Object({ name: Type.String(), agent: Type.String() }),
    task: Type.String(),
    inputs: Type.Object({
      prompts: Type.Array(
        Type.Object({
          name: Type.String(),
          description: Type.Optional(Type.String()),
          required: Type.Boolean(),
          default: Type.Optional(Type.String()),
        }),
      ),
      functions: Type.Object({
        binding: Type.Array(
          Type.Object({
            name: Type.String(),
            function: Type.String(),
            agent: Type.Optional(Type.String()),
            target: Type.String(),
            type: bindingType,
            required: Type.Boolean(),
            default: Type.Optional(anyJson),
            description: Type.Optional(Type.String()),
          }),
        ),
        auth: Type.Array(
          Type.Object({
            name: Type.String(),
            function: Type.String(),
            agent: Type.Optional(Type.String()),
            header: Type.String(),
            required: Type.Boolean(),
            secret: Type.Optional(Type.String()),
            description: Type.Optional(Type.String()),
          }),
        ),
      }),
    }),
    functions: Type.Object({
      openApi: Type.Array(Type.Object({ name: Type.Optional(Type.String()), ref: Type.String() })),
    }),
    result: Type.Optional(
      Type.Object(
        { schema: jsonSchema },
        { description: "The final answer's shape: a JSON Schema of an object (absent: the answer is text)" },
      ),
    ),
    conversation: Type.Optional(
      Type.Object(
        { maxIdleSeconds: Type.Integer() },
        { description: 'A conversation: after each reply the run waits for the next message, at most maxIdleSeconds' },
      ),
    ),
  },
  { $id: 'Interaction' },
);

/** Exactly what a model is sent for a tool. */
export const ToolDefinitionSchema = Type.Object(
  { name: Type.String(), description: Type.String(), parameters: jsonMap },
  { $id: 'ToolDefinition', description: 'Exactly what a model is sent for the tool' },
);

/** One input a run of an interaction gives. */
export const InteractionInputSchema = Type.Object(
  {
    name: Type.String(),
    kind: stringEnum(['prompt', 'binding', 'auth']),
    required: Type.Boolean(),
    description: Type.Optional(Type.String()),
    default: Type.Optional(anyJson),
    function: Type.Optional(Type.String()),
    agent: Type.Optional(Type.String()),
    target: Type.Optional(Type.String()),
    type: Type.Optional(bindingType),
    header: Type.Optional(Type.String()),
    secret: Type.Optional(Type.String()),
  },
  {
    $id: 'InteractionInput',
    description:
      'One input a run gives: a prompt (fills %%name%%), a binding (written into a tool call) or an auth input (a secret id)',
  },
);

/** A tool version a resource pins. */
export const ToolPinSchema = Type.Object({ name: Type.String(), version: Type.Integer() }, { $id: 'ToolPin' });

// Deploys, versions and secrets.

/** What a deploy did (or would do) to one resource. */
export const DeployChangeSchema = Type.Object({
  kind: stringEnum(RESOURCE_KINDS),
  name: Type.String(),
  action: stringEnum(['create', 'update', 'unchanged']),
  version: Type.Integer(),
  previousVersion: Type.Optional(Type.Integer()),
  changed: Type.Optional(Type.Array(Type.String())),
  breaking: Type.Array(Type.String()),
});

/** The answer of `POST /v1/deploy`: `applied` is false for a dry run. */
export const DeployPlanSchema = Type.Object(
  { applied: Type.Boolean(), changes: Type.Array(DeployChangeSchema) },
  { $id: 'DeployPlan' },
);

/** The answer of enabling or disabling a version. */
export const VersionStateSchema = Type.Object(
  { name: Type.String(), version: Type.Integer(), enabled: Type.Boolean() },
  { $id: 'VersionState' },
);

/** One stored version in a list. */
export const VersionSummarySchema = Type.Object(
  {
    version: Type.Integer(),
    enabled: Type.Boolean(),
    createdAt: timestamp(),
    deployedBy: Type.Union([Type.String(), Type.Null()], {
      description: 'The id of the key that deployed this version (null for one deployed before schema 22)',
    }),
  },
  { $id: 'VersionSummary' },
);

/** A secret by id and name; its value is never returned. */
export const SecretSchema = Type.Object(
  { id: uuid(), name: Type.String(), createdAt: timestamp(), updatedAt: timestamp() },
  { $id: 'Secret', description: 'A secret by id and name; its value is never returned' },
);

// Runs, their events and approvals.

/** The API key that answered an approval or cancelled a run. */
export const ActorSchema = Type.Object(
  { keyId: Type.String(), keyName: Type.String() },
  { $id: 'Actor', description: 'The API key that answered: its id and name' },
);

/** One call waiting for a person, as it is shown (never a secret). */
export const ApprovalSchema = Type.Object(
  {
    id: uuid(),
    runId: nullable(uuid(), 'The run that waits on it; null for an approval made outside a run'),
    functionName: Type.String(),
    argumentsJson: Type.String({
      description: "JSON text: the model's arguments and the run inputs written into the call",
    }),
    status: stringEnum(APPROVAL_STATUSES),
    agentName: nullable(Type.String()),
    reason: nullable(Type.String(), 'The reason given with a rejection'),
    answeredBy: nullable(ref(ActorSchema)),
    approvedBy: Type.Optional(
      Type.Array(ref(ActorSchema), {
        description:
          'The distinct keys that approved so far, in order (a tool whose policy needs more than one approval stays Pending until enough did)',
      }),
    ),
    answeredAt: nullable(timestamp()),
    expiresAt: nullable(timestamp()),
    createdAt: timestamp(),
  },
  { $id: 'Approval', description: 'One call waiting for a person, as it is shown (never a secret)' },
);

/** Why a run failed. */
export const RunErrorSchema = Type.Object({ code: Type.String(), message: Type.String() });

/** A pinned version a run uses. */
export const VersionRefSchema = Type.Object({
  kind: stringEnum(RESOURCE_KINDS),
  name: Type.String(),
  version: Type.Integer(),
});

/** A run of an interaction. */
export const RunSchema = Type.Object(
  {
    id: uuid(),
    interaction: Type.Object({ name: Type.String(), version: Type.Integer() }),
    status: stringEnum(RUN_STATUSES),
    interactive: Type.Boolean({ description: 'False for an app run: nobody can be asked to approve' }),
    inputs: Type.Unsafe<Record<string, unknown>>({
      type: 'object',
      additionalProperties: true,
      description:
        'The inputs as given (secret inputs are secret ids, never values); a secret input whose secret the calling key may not use is {"secret": true}',
    }),
    result: Type.Union([Type.String(), unknownMap, Type.Null()], {
      description:
        "The final answer of a Completed run: its text, or the object matching the interaction's result.schema when it declares one",
    }),
    error: nullable(RunErrorSchema),
    pendingApproval: nullable(
      ref(ApprovalSchema),
      "The approval the run waits on while PendingApproval; a parent waiting on a child run shows the child's (its runId the child's, its agentName the agent that asks)",
    ),
    parentRunId: nullable(uuid(), 'The run whose tool call started this one (an agent handed a task); null at the top'),
    agent: nullable(Type.String(), "The agent a child run plays; null for a run of the interaction's own agent"),
    versions: Type.Array(VersionRefSchema, { description: 'Every version the run uses, pinned when it started' }),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  },
  { $id: 'Run', description: 'A run of an interaction' },
);

/** A run as a list shows it: no inputs or versions, its result cut to a summary (the run's own GET has all). */
export const RunSummarySchema = Type.Object(
  {
    id: uuid(),
    interaction: Type.Object({ name: Type.String(), version: Type.Integer() }),
    status: stringEnum(RUN_STATUSES),
    interactive: Type.Boolean({ description: 'False for an app run: nobody can be asked to approve' }),
    result: nullable(Type.String(), 'The first 200 characters of the final answer of a Completed run'),
    resultTruncated: Type.Boolean({ description: 'True when the result is longer than the summary in result' }),
    error: nullable(RunErrorSchema),
    pendingApprovalId: nullable(
      uuid(),
      "The approval the run waits on while PendingApproval (a child run's, for a parent waiting on it)",
    ),
    parentRunId: nullable(uuid(), 'The run whose tool call started this one (an agent handed a task); null at the top'),
    agent: nullable(Type.String(), "The agent a child run plays; null for a run of the interaction's own agent"),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  },
  {
    $id: 'RunSummary',
    description: 'A run in a list: no inputs or versions, its result cut to 200 characters (GET /v1/runs/{id} has all)',
  },
);

/** One stored step of a run; `seq` counts from 1 and is the SSE event id. */
export const RunEventSchema = Type.Object(
  { seq: Type.Integer(), type: stringEnum(RUN_EVENT_TYPES), at: timestamp(), data: unknownMap },
  { $id: 'RunEvent', description: 'One stored step of a run; seq counts from 1 and is the SSE event id' },
);
