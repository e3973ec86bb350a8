// The wire's shapes, each declared once: a TypeBox schema is both the JSON Schema the server validates and
// serializes with (and @fastify/swagger publishes in /openapi.json) and, through `Static`, the TypeScript type.
// The server imports these, and @maitento/lang's resource types, the engine's api types and the store's answers
// are these `Static` types (each imports them from here): one declaration, nothing to keep equal.
import { type Static, type TSchema, type TUnsafe, Type } from 'typebox';
import {
  APPROVAL_STATUSES,
  RESOURCE_KINDS,
  RUN_EVENT_TYPES,
  RUN_STATUSES,
  SCHEDULE_MISSED,
  SCHEDULE_OVERLAPS,
  TOKEN_AUTH_METHODS,
  TRIGGER_RUN_STATUSES,
  TRIGGER_VERIFY_STYLES,
} from './constants.js';
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
  CONNECTION_STATUSES,
  KEY_ROLES,
  RESOURCE_KINDS,
  RUN_EVENT_TYPES,
  RUN_STATUSES,
  SCHEDULE_MISSED,
  SCHEDULE_OVERLAPS,
  SCHEDULE_TICK_STATUSES,
  TERMINAL_EVENT_TYPES,
  TERMINAL_RUN_STATUSES,
  TOKEN_AUTH_METHODS,
  TRIGGER_RUN_STATUSES,
  TRIGGER_VERIFY_STYLES,
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
  {
    error: Type.String(),
    code: Type.String(),
    diagnostics: Type.Optional(Type.Array(ref(DiagnosticSchema))),
    authorization: Type.Optional(
      Type.Object(
        {
          provider: Type.String({ description: 'The auth provider the end user connects at' }),
          endUser: Type.String(),
          reason: Type.String({ description: 'What the connection lacks: not connected, missing scopes: ...' }),
          scopes: Type.Array(Type.String()),
          url: Type.String({ description: 'The connect link to hand the end user (opened once, before expiresAt)' }),
          expiresAt: timestamp(),
        },
        {
          description:
            "With api:connections:authorization-required from a direct tool call: the end user's connect link; they open it, then the call is made again",
        },
      ),
    ),
  },
  {
    $id: 'Error',
    description:
      'Every error: a message, a stable code, for a refused deploy its diagnostics, and for a direct tool call whose end user must connect their connect link',
  },
);

// Resources, as @maitento/lang compiles them.

const parameter = Type.Object({
  name: Type.String(),
  description: Type.Optional(Type.String()),
  required: Type.Boolean(),
  type: stringEnum(['string', 'number', 'integer', 'boolean']),
});

/**
 * An OAuth 2 authorization server end users connect their accounts at (`auth-providers/<name>.mtr`): its
 * issuer (metadata discovered from `/.well-known/...`) or its explicit endpoints, the client registered there,
 * and how tokens are asked for. PKCE (S256) is always used; the client secret is a secret's name, never its value.
 */
export const AuthProviderSchema = Type.Object(
  {
    kind: stringEnum(['auth-provider']),
    name: Type.String(),
    issuer: Type.Optional(
      Type.String({
        description: 'The issuer identifier; endpoints come from its metadata (RFC 8414, OIDC Discovery)',
      }),
    ),
    authorizationUrl: Type.Optional(
      Type.String({ description: 'The authorization endpoint, when no issuer is given' }),
    ),
    tokenUrl: Type.Optional(Type.String({ description: 'The token endpoint, when no issuer is given' })),
    resource: Type.Optional(
      Type.String({
        description:
          "A protected resource (a remote MCP server's URL): the issuer is the first authorization server its metadata names (RFC 9728)",
      }),
    ),
    clientId: Type.Optional(
      Type.String({
        description:
          'The client id registered at the provider; absent when the client is registered dynamically (RFC 7591) at its issuer',
      }),
    ),
    clientSecret: Type.Optional(Type.String({ description: "The client secret's name (a secret of the namespace)" })),
    tokenAuthMethod: stringEnum(TOKEN_AUTH_METHODS),
    scopes: Type.Array(Type.String(), { description: 'The scopes every connection asks for' }),
    authorizationParams: Type.Unsafe<Record<string, string>>({
      type: 'object',
      additionalProperties: { type: 'string' },
      description: 'Extra parameters of the authorization request (such as access_type = "offline")',
    }),
    refresh: Type.Boolean({ description: 'Whether access tokens are refreshed with the refresh token' }),
  },
  { $id: 'AuthProvider' },
);

/**
 * A schedule (`schedules/<name>.mtr`): the interaction it starts a run of at every tick of its cron expression in its
 * time zone, with fixed inputs, and what it does with overlapping runs and with ticks missed while no process ran.
 */
export const ScheduleSchema = Type.Object(
  {
    kind: stringEnum(['schedule']),
    name: Type.String(),
    interaction: Type.String({ description: 'The interaction each tick starts a run of (its latest enabled version)' }),
    inputs: Type.Unsafe<Record<string, Json>>({
      type: 'object',
      additionalProperties: true,
      description: "The run's inputs, as a start request gives them (an auth input is a secret's id)",
    }),
    cron: Type.String({ description: 'A cron expression of 5 fields, or 6 with seconds first' }),
    timezone: Type.String({ description: 'The IANA time zone the cron expression is read in (default "UTC")' }),
    overlap: stringEnum(SCHEDULE_OVERLAPS),
    missed: stringEnum(SCHEDULE_MISSED),
    enabled: Type.Boolean({ description: 'false: the schedule starts nothing (it stays listed)' }),
  },
  { $id: 'Schedule' },
);

/**
 * A trigger (`triggers/<name>.mtr`): an inbound webhook, `POST /v1/hooks/{namespace}/{name}`, verified with a stored
 * secret, whose payload is mapped to the run inputs of the interaction each delivery starts.
 */
export const TriggerSchema = Type.Object(
  {
    kind: stringEnum(['trigger']),
    name: Type.String(),
    interaction: Type.String({ description: 'The interaction each delivery starts a run of' }),
    inputs: Type.Unsafe<Record<string, { pointer: string; default?: Json }>>({
      type: 'object',
      additionalProperties: {
        type: 'object',
        properties: { pointer: { type: 'string' }, default: {} },
        required: ['pointer'],
      },
      description: 'Each run input: the JSON Pointer (RFC 6901) of its value in the payload, and a default',
    }),
    verify: Type.Optional(
      Type.Object(
        {
          style: stringEnum(TRIGGER_VERIFY_STYLES),
          secret: Type.String({ description: "The secret's name holding the shared signing secret" }),
          toleranceSeconds: Type.Integer({
            description: 'How old a signed timestamp may be (Standard Webhooks, Stripe)',
          }),
        },
        { description: 'An inbound webhook: how each delivery is verified (absent on a chaining trigger)' },
      ),
    ),
    on: Type.Optional(
      Type.Object(
        {
          runCompleted: Type.String({ description: 'The interaction whose runs, once ended, each start a run' }),
          statuses: Type.Array(stringEnum(TRIGGER_RUN_STATUSES), {
            description: 'The ends that start one: Completed (default), Failed, or both',
          }),
        },
        { description: "A chaining trigger: another interaction's run ending starts a run (absent on a webhook)" },
      ),
    ),
    eventId: Type.Optional(
      Type.String({ description: "The JSON Pointer of the delivery's id in the payload, instead of the style's own" }),
    ),
    maxBodyBytes: Type.Integer({ description: 'The largest body taken' }),
    enabled: Type.Boolean(),
  },
  { $id: 'Trigger' },
);

/** A rate limit and concurrency cap (docs/limits.md), of a tool or of a connector's origin. */
const limitCounts = {
  calls: Type.Optional(Type.Integer({ minimum: 1, description: 'Calls admitted in any window of `per`' })),
  per: Type.Optional(Type.String({ description: 'The window of `calls`: "5s", "1m", "1h"' })),
  inFlight: Type.Optional(Type.Integer({ minimum: 1, description: 'Calls in flight at once' })),
};
/** A limit counted apart for each API key or each end user (docs/limits.md, "Per key and per end user"). */
const ScopedLimitSchema = (description: string) => Type.Object(limitCounts, { description });
const LimitSchema = (description: string) =>
  Type.Object(
    {
      ...limitCounts,
      perKey: Type.Optional(
        ScopedLimitSchema(
          'The same counts for each API key apart: the key of a REST or MCP call, or the key that started the run',
        ),
      ),
      perEndUser: Type.Optional(
        ScopedLimitSchema('The same counts for each end user apart (a run or an MCP call that names one)'),
      ),
      onLimit: Type.Optional(
        Type.Unsafe<'wait' | 'fail'>({
          type: 'string',
          enum: ['wait', 'fail'],
          description: 'Inside a run: "wait" (default) until the window opens, or "fail" the tool call',
        }),
      ),
    },
    { description },
  );

/** Starts of runs per window, counted for each key or end user (docs/limits.md). */
const StartLimitSchema = (description: string) =>
  Type.Object(
    {
      calls: Type.Integer({ minimum: 1, description: 'Starts admitted in any window of `per`' }),
      per: Type.String({ description: 'The window of `calls`: "5s", "1m", "1h"' }),
    },
    { description },
  );

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
    auth: stringEnum(['None', 'Header', 'Maitento', 'OAuth2']),
    provider: Type.Optional(
      Type.String({
        description: "With auth OAuth2: the auth provider whose connection of the run's end user is used",
      }),
    ),
    grant: Type.Optional(
      Type.Unsafe<'authorization_code' | 'client_credentials'>({
        type: 'string',
        enum: ['authorization_code', 'client_credentials'],
        description:
          "With auth OAuth2: authorization_code (the run's end user's connection, the default) or client_credentials (the provider's own token)",
      }),
    ),
    scopes: Type.Optional(
      Type.Array(Type.String(), {
        description: "With auth OAuth2: the scopes the connector needs, besides the provider's",
      }),
    ),
    limit: Type.Optional(
      LimitSchema(
        "A limit on the calls to the connector's origin by every tool that uses a connector with this origin and a limit, across every process (docs/limits.md)",
      ),
    ),
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
            Type.Array(Type.String(), {
              description: 'Who may answer: key roles, API key ids and/or people (person:<id>)',
            }),
          ),
          count: Type.Optional(Type.Integer({ minimum: 1, description: 'How many distinct approvers are needed' })),
          excludeStarter: Type.Optional(
            Type.Boolean({ description: "true: the key that started the run's tree may not answer" }),
          ),
        },
        { description: "The tool's approval policy (docs/roles.md)" },
      ),
    ),
    limit: Type.Optional(
      LimitSchema("The tool's rate limit and concurrency cap, across every process (docs/limits.md)"),
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
    budget: Type.Optional(
      Type.Object(
        {
          tokens: Type.Optional(Type.Integer({ description: 'The most input + output tokens a run may spend' })),
          costUsd: Type.Optional(Type.Number({ description: 'The most a run may spend in US dollars' })),
          onExceeded: Type.Unsafe<'wait' | 'fail'>({ type: 'string', enum: ['wait', 'fail'] }),
        },
        {
          description:
            'What each run may spend (docs/runs.md, Usage and budgets): once it reaches it, the run waits for a person to extend it (PendingBudget) or fails, as onExceeded says',
        },
      ),
    ),
    limit: Type.Optional(
      Type.Object(
        {
          perKey: Type.Optional(
            StartLimitSchema('Starts admitted for each API key apart, in any window of `per`, across every server'),
          ),
          perEndUser: Type.Optional(
            StartLimitSchema('Starts admitted for each end user apart (a start naming one), across every server'),
          ),
        },
        {
          description:
            "A limit on starting runs (docs/limits.md, A key's limit on starting runs): over it a start answers 429 api:limits:exceeded; schedules and triggers are not counted",
        },
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
  // delete: a resource the repo no longer holds, deleted by a deploy with prune (`version` is its last version).
  action: stringEnum(['create', 'update', 'unchanged', 'delete']),
  version: Type.Integer(),
  previousVersion: Type.Optional(Type.Integer()),
  changed: Type.Optional(Type.Array(Type.String())),
  breaking: Type.Array(Type.String()),
  pinnedBy: Type.Optional(
    Type.Array(Type.String(), {
      description:
        'A delete only: the runs not yet ended that pin versions of it (their ids); those versions stay enabled ' +
        'until the runs end, the rest are disabled',
    }),
  ),
});

/** A resource of the namespace that a deploy without prune does not hold: what prune would delete. */
export const DeployAbsentSchema = Type.Object({
  kind: stringEnum(RESOURCE_KINDS),
  name: Type.String(),
  version: Type.Integer({ description: 'Its latest version' }),
});

/** The answer of `POST /v1/deploy`: `applied` is false for a dry run. */
export const DeployPlanSchema = Type.Object(
  {
    applied: Type.Boolean(),
    changes: Type.Array(DeployChangeSchema),
    absent: Type.Optional(
      Type.Array(DeployAbsentSchema, {
        description:
          'Without prune (present only when there is one): the resources of the namespace the repo does not hold, ' +
          'left as they are; a deploy with prune would delete them',
      }),
    ),
    warnings: Type.Optional(
      Type.Array(ref(DiagnosticSchema), {
        description:
          "What the deploy did not refuse but a run may trip on (present only when there is one): the compiler's " +
          'warnings, and an agent whose model names a provider this server has no key for ' +
          '(api:deploy:model-not-configured)',
      }),
    ),
  },
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

/** The API key (or the person, through single sign-on) that answered an approval or cancelled a run. */
export const ActorSchema = Type.Object(
  {
    keyId: Type.String({ description: 'The key id, or `person:<id>` for a person signed in through single sign-on' }),
    keyName: Type.String({ description: "The key's name, or the person's name (and email)" }),
  },
  { $id: 'Actor', description: 'The API key or person that answered: its id and name' },
);

/** One call waiting for a person, as it is shown (never a secret). */
export const ApprovalSchema = Type.Object(
  {
    id: uuid(),
    runId: nullable(uuid(), 'The run that waits on it; null for an approval made outside a run'),
    functionName: Type.String(),
    argumentsJson: Type.String({
      description:
        "JSON text: the model's arguments (or those a person set by editing) and the run inputs written into the call",
    }),
    requestHash: Type.String({
      description:
        'The hash of the exact request shown (method, URL, headers but the credential, body, identity); an edit sends it back, so a stale view approves nothing',
    }),
    edited: nullable(
      Type.Object({ by: ref(ActorSchema) }, { additionalProperties: false }),
      'Set when a person changed the arguments the model chose (edit, then approve): the key that last edited them',
    ),
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

/** What a run's model turns spent. */
export const RunUsageSchema = Type.Object(
  {
    inputTokens: Type.Integer({ description: 'Input tokens of all its model turns, as the providers reported them' }),
    outputTokens: Type.Integer({ description: 'Output tokens of all its model turns' }),
    costUsd: Type.Number({
      description: 'Their cost in US dollars by the price table (MT_MODEL_PRICES); 0 for a model it has no price for',
    }),
  },
  { $id: 'RunUsage', description: "What a run's model turns spent so far (docs/runs.md, Usage and budgets)" },
);

/** What a run may spend. */
export const RunBudgetSchema = Type.Object(
  {
    tokens: nullable(
      Type.Integer({ minimum: 1 }),
      'The most input + output tokens its model turns may spend; null: no limit',
    ),
    costUsd: nullable(Type.Number(), 'The most they may cost in US dollars; null: no limit'),
    onExceeded: Type.Unsafe<'wait' | 'fail'>({
      type: 'string',
      enum: ['wait', 'fail'],
      description:
        'When the next model turn would pass it: wait for a person to extend it (PendingBudget) or fail with api:runs:budget-exceeded',
    }),
  },
  { $id: 'RunBudget', description: "What a run may spend: its interaction's budget, or the one it was started with" },
);

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
    pendingAuthorization: Type.Optional(
      Type.Object(
        {
          toolCallId: Type.String(),
          provider: Type.String({ description: 'The auth provider the end user connects at' }),
          endUser: Type.String(),
          scopes: Type.Array(Type.String()),
          reason: Type.String({ description: 'What the connection lacks: not connected, missing scopes: ...' }),
          url: Type.String({
            description: 'The connect link to hand the end user (opened once, before linkExpiresAt)',
          }),
          linkExpiresAt: timestamp(),
        },
        {
          description:
            'While PendingAuthorization: the call that waits for its end user to connect, and the connect link for them',
        },
      ),
    ),
    waiting: Type.Optional(
      Type.Object(
        {
          reason: stringEnum(['rate-limit']),
          until: timestamp(),
          limit: Type.String({
            description:
              'The policy name of the limit, as the RateLimit fields name it: tool-<name>, origin, tool-<name>-key...',
          }),
          description: Type.String({ description: 'The limit in words: "2 calls per 3s"' }),
          tool: Type.String({ description: 'The tool whose call waits' }),
          toolCallId: Type.String(),
        },
        {
          description:
            'While PendingLimit: the call waits for the window of its limit to open (docs/limits.md); the run holds no worker and goes on at `until`',
        },
      ),
    ),
    parentRunId: nullable(uuid(), 'The run whose tool call started this one (an agent handed a task); null at the top'),
    agent: nullable(Type.String(), "The agent a child run plays; null for a run of the interaction's own agent"),
    endUser: Type.Optional(
      Type.String({ description: 'The end user the run acts for (its OAuth2 connectors use their connections)' }),
    ),
    origin: Type.Optional(
      Type.Object(
        {
          kind: stringEnum(['schedule', 'trigger']),
          name: Type.String({ description: 'The schedule or trigger' }),
          version: Type.Integer({ description: 'Its version that started the run' }),
          tick: Type.Optional(timestamp()),
          eventId: Type.Optional(Type.String({ description: "The delivery's event id (a trigger's)" })),
          runId: Type.Optional(uuid()),
          status: Type.Optional(stringEnum(TRIGGER_RUN_STATUSES)),
        },
        {
          description:
            "What started the run when no request did: a schedule's tick, an inbound webhook's delivery, or (runId, status) the end of another run a chaining trigger follows; absent for a run a request started",
        },
      ),
    ),
    versions: Type.Array(VersionRefSchema, { description: 'Every version the run uses, pinned when it started' }),
    usage: ref(RunUsageSchema),
    budget: nullable(ref(RunBudgetSchema), 'What the run may spend; null: no budget'),
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
    usage: ref(RunUsageSchema),
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
