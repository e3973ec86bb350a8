// What a request carries (path parameters, query strings, bodies), declared once like the answers in
// ./schemas.ts: the server validates every request with these schemas (so their limits are the API's limits
// and its 400 messages), @fastify/swagger publishes them in /openapi.json, and the SDK's parameter types are
// their `Static` types (../types.ts and the resources' parameter types), as are the engine's and the store's input
// types (they import them). They have no `$id`: each is written inline
// into the operation that takes it. Each route of the server names the ones its operation takes, in its own
// `schema` (packages/server/src/routes/).
import { Type } from 'typebox';
import { APPROVAL_STATUSES, type Json, KEY_ROLES, RUN_STATUSES, stringEnum } from './schemas.js';

/** The longest resource name a path may carry (a deployed file path is at most 1000 characters). */
export const MAX_NAME_LENGTH = 1000;

/** The largest int4: versions, `after` sequence numbers. */
const MAX_INT4 = 2147483647;

// A name is a file name: no control characters (PostgreSQL text cannot even hold NUL).
const resourceName = Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH, pattern: '^[^\\u0000-\\u001f]+$' });

// Path parameters.

/** The `:name` path parameter of resources. */
export const NameParamsSchema = Type.Object({ name: resourceName });

/** The `:name/versions/:version` path parameters. */
export const VersionParamsSchema = Type.Object({
  name: resourceName,
  version: Type.Integer({ minimum: 1, maximum: MAX_INT4 }),
});

/** The `:id` path parameter of keys, secrets, runs and approvals. */
export const IdParamsSchema = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

// Namespaces, keys, secrets.

/** The body of `POST /v1/namespaces`. */
export const CreateNamespaceBodySchema = Type.Object(
  { name: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,62}$' }) },
  { additionalProperties: false },
);

/** The body of `POST /v1/keys`. */
export const CreateKeyBodySchema = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 200 })),
    role: stringEnum(KEY_ROLES),
    secrets: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
        maxItems: 1000,
        description:
          'Ids of secrets of the namespace the key may name in a run (inputs.functions.auth); a user key may name no other. An admin key uses every secret.',
      }),
    ),
  },
  { additionalProperties: false },
);

const secretValue = Type.String({ minLength: 1, maxLength: 65536 });

/** The body of `POST /v1/secrets`. */
export const CreateSecretBodySchema = Type.Object(
  { name: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$' }), value: secretValue },
  { additionalProperties: false },
);

/** The body of `PUT /v1/secrets/{id}`. */
export const RotateSecretBodySchema = Type.Object({ value: secretValue }, { additionalProperties: false });

/** The body of `POST /v1/admin/secret-key/rotate` (it may be sent empty). */
export const RotateSecretKeyBodySchema = Type.Object(
  { batchSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) },
  { additionalProperties: false },
);

// Deploys and tool calls.

/** One file of a config repo, its path relative to the repo root with `/`. */
export const DeployFileSchema = Type.Object(
  { path: Type.String({ minLength: 1, maxLength: 1000 }), content: Type.String() },
  { additionalProperties: false },
);

/** The body of `POST /v1/deploy`. */
export const DeployBodySchema = Type.Object(
  {
    files: Type.Array(DeployFileSchema, { maxItems: 20000 }),
    dryRun: Type.Optional(Type.Boolean()),
    prune: Type.Optional(
      Type.Boolean({
        description:
          'Delete the resources of the namespace the repo no longer holds, in the same transaction (each a delete ' +
          'change of the plan); without it they are listed in absent and left as they are',
      }),
    ),
    endUser: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          "The end user whose connection lists the OAuth2 MCP connectors' servers, to read their tools' input " +
          'schemas (used for the listing only)',
      }),
    ),
  },
  { additionalProperties: false },
);

/** The body of `POST /v1/extops/{name}/call`. */
export const ExtopCallBodySchema = Type.Object(
  {
    arguments: Type.Unsafe<{ [key: string]: Json }>({ type: 'object', additionalProperties: true }),
    version: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_INT4 })),
    endUser: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          'The end user the call acts for: an auth = "OAuth2" connector sends this person\'s connection\'s access token; without a usable connection the call is refused (409 api:connections:authorization-required) with their connect link',
      }),
    ),
  },
  { additionalProperties: false },
);

// Runs and approvals.

/** A budget as a request gives it: a limit on tokens, on cost, or both, and what happens when the run reaches it. */
function budgetBody(description: string) {
  return Type.Object(
    {
      tokens: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: Number.MAX_SAFE_INTEGER,
          description: 'The most input + output tokens its model turns may spend',
        }),
      ),
      costUsd: Type.Optional(
        Type.Number({
          minimum: 0.000001,
          maximum: 1e9,
          description: 'The most they may cost in US dollars (at least 0.000001)',
        }),
      ),
      onExceeded: Type.Optional(
        Type.Unsafe<'wait' | 'fail'>({
          type: 'string',
          enum: ['wait', 'fail'],
          description:
            'When it reaches the budget: wait for a person to extend it (PendingBudget) or fail (api:runs:budget-exceeded)',
        }),
      ),
    },
    { additionalProperties: false, minProperties: 1, description },
  );
}

/** The body of `POST /v1/interactions/{name}/runs` (it may be sent empty). */
export const StartRunBodySchema = Type.Object(
  {
    inputs: Type.Optional(
      Type.Unsafe<Record<string, unknown>>({
        type: 'object',
        additionalProperties: true,
        description: 'Prompt, binding and auth inputs by name (auth inputs are secret ids)',
      }),
    ),
    interactive: Type.Optional(Type.Boolean({ description: 'Default true; false is an app run with nobody to ask' })),
    version: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_INT4 })),
    endUser: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          'The end user the run acts for: its auth = "OAuth2" connectors send this person\'s connection\'s access token',
      }),
    ),
    budget: Type.Optional(
      budgetBody(
        "What the run may spend, instead of its interaction's budget (docs/runs.md, Usage and budgets); tokens, costUsd or both",
      ),
    ),
  },
  { additionalProperties: false },
);

/** The body of `POST /v1/runs/{id}/budget`: the run's new budget, replacing the one it reached. */
export const ExtendBudgetBodySchema = budgetBody(
  'The new budget: each limit given replaces the old one, a limit not given stays; a limit must be above what the run spent',
);

/** The query of `GET /v1/runs`. */
export const ListRunsQuerySchema = Type.Object(
  {
    interaction: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
    /** Only runs whose pinned versions include this agent. */
    agent: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
    tool: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        description: 'Only runs that called this tool (a call started, or one asked a person about)',
      }),
    ),
    status: Type.Optional(stringEnum(RUN_STATUSES)),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 500,
        description: 'Opaque: the nextCursor of the previous page, unchanged (none for the first page)',
      }),
    ),
  },
  { additionalProperties: false },
);

/** The query of `GET /v1/runs/{id}/stream`. */
export const RunEventsQuerySchema = Type.Object(
  { after: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_INT4 })) },
  { additionalProperties: false },
);

/** The query of `GET /v1/runs/{id}/events`: events after `after`, at most `limit` of them (default 100). */
export const ListRunEventsQuerySchema = Type.Object(
  {
    after: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_INT4 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  },
  { additionalProperties: false },
);

/** The body of `POST /v1/runs/{id}/cancel`: nothing (it may be sent empty). */
export const CancelRunBodySchema = Type.Object({}, { additionalProperties: false });

/** The body of `POST /v1/runs/{id}/messages`: the next message of a conversation. */
export const SendRunMessageBodySchema = Type.Object(
  {
    text: Type.String({
      maxLength: 32_768,
      description: 'The message (not empty); the run must be WaitingForInput',
    }),
  },
  { additionalProperties: false },
);

/** The approval a run's answer is for (default: the one the run waits on). */
const answeredApprovalId = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'Default: the one the run waits on',
});

/** The reason of a rejection, which the model is told. */
const rejectionReason = Type.String({ minLength: 1, maxLength: 4000, description: 'Why: the model is told it' });

/** Edit, then approve: the model-settable arguments the call is made with instead (decision 0215). */
const editedArguments = Type.Object(
  {},
  {
    additionalProperties: true,
    description:
      'Edit, then approve: the arguments the call is made with instead of the model\'s, shaped as the model\'s ({ "request": {...}, "additionalInputs": {...} }), without the values the tool or the run fixes',
  },
);

/** The hash of the request the approver saw (the approval's `requestHash`). */
const seenRequestHash = Type.String({
  minLength: 1,
  maxLength: 200,
  description: "The approval's requestHash as the approver saw it; required with arguments",
});

/** The body of `POST /v1/runs/{id}/approve` (it may be sent empty). */
export const RunAnswerBodySchema = Type.Object(
  {
    approvalId: Type.Optional(answeredApprovalId),
    reason: Type.Optional(rejectionReason),
    arguments: Type.Optional(editedArguments),
    requestHash: Type.Optional(seenRequestHash),
  },
  { additionalProperties: false },
);

/** The body of `POST /v1/runs/{id}/reject`: the `reason` is required. */
export const RunRejectBodySchema = Type.Object(
  { approvalId: Type.Optional(answeredApprovalId), reason: rejectionReason },
  { additionalProperties: false },
);

/** The query of `GET /v1/approvals`. */
export const ListApprovalsQuerySchema = Type.Object(
  {
    status: Type.Optional(stringEnum([...APPROVAL_STATUSES, 'all'] as const)),
    runId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
  },
  { additionalProperties: false },
);

/** The body of `POST /v1/approvals/{id}/approve` (it may be sent empty). */
export const ApprovalAnswerBodySchema = Type.Object(
  {
    reason: Type.Optional(rejectionReason),
    arguments: Type.Optional(editedArguments),
    requestHash: Type.Optional(seenRequestHash),
  },
  { additionalProperties: false },
);

/** The body of `POST /v1/approvals/{id}/reject`: the `reason` is required. */
export const ApprovalRejectBodySchema = Type.Object({ reason: rejectionReason }, { additionalProperties: false });
