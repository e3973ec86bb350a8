// The audit log's shapes (docs/audit.md), declared once like ./schemas.ts.
import { Type } from 'typebox';
import { timestamp } from './formats.js';
import { ref, stringEnum } from './schemas.js';

const summary = Type.Union(
  [Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true }), Type.Null()],
  { description: 'Names, ids, roles, versions and states: never a secret value, a key or a request body' },
);

/** One row of the audit log: who changed what, when, and in which request. */
export const AuditEntrySchema = Type.Object(
  {
    id: Type.String({ description: "The row's place in the log: a later row has a greater id (a decimal number)" }),
    at: timestamp(),
    namespace: Type.String(),
    actor: Type.Object({
      kind: stringEnum(['key', 'person', 'system']),
      id: Type.String({
        description: 'The key id, `person:<id>` for a person signed in through single sign-on, or `system`',
      }),
      role: Type.Union([Type.String(), Type.Null()], {
        description: "The key's or person's role then (null for the system)",
      }),
      via: Type.String({ description: 'api, console, migrate, runs-prune or retention' }),
    }),
    action: Type.String({ description: 'A dotted name: key.created, secret.rotated, deploy.applied, ...' }),
    target: Type.Object({ kind: Type.String(), id: Type.String() }),
    before: summary,
    after: summary,
    requestId: Type.Union([Type.String(), Type.Null()], { description: 'The X-Request-Id of the change' }),
  },
  { $id: 'AuditEntry' },
);

/** One page of the audit log, newest first; `nextCursor` is null on the last one. */
export const AuditPageSchema = Type.Object(
  {
    entries: Type.Array(ref(AuditEntrySchema)),
    nextCursor: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'AuditPage' },
);

// An ISO 8601 time with its offset (the server checks that it is a real one: api:audit:time-invalid).
const ISO_TIME = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})$';

const auditFilters = {
  actor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'A key id, person:<id>, or system' })),
  action: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'An action, or its first part: secret gives every secret.*',
    }),
  ),
  target: Type.Optional(
    Type.String({ minLength: 1, maxLength: 1000, description: "A target's id or name, or kind:id" }),
  ),
  since: Type.Optional(Type.String({ pattern: ISO_TIME, description: 'Rows at or after this ISO 8601 time' })),
  until: Type.Optional(Type.String({ pattern: ISO_TIME, description: 'Rows before this ISO 8601 time' })),
};

/** The query of `GET /v1/audit`. */
export const ListAuditQuerySchema = Type.Object(
  {
    ...auditFilters,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Default 100' })),
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

/** The query of `GET /v1/audit/export`: the filters of the listing, without paging. */
export const ExportAuditQuerySchema = Type.Object(auditFilters, { additionalProperties: false });

// Usage figures (docs/runs.md, "Usage and budgets").

/** The query of `GET /v1/usage`. */
export const UsageQuerySchema = Type.Object(
  {
    since: Type.Optional(
      Type.String({ pattern: ISO_TIME, description: 'Runs created at or after this ISO 8601 time' }),
    ),
    until: Type.Optional(Type.String({ pattern: ISO_TIME, description: 'Runs created before this ISO 8601 time' })),
    by: Type.Optional(
      Type.Unsafe<'namespace' | 'interaction' | 'key' | 'tool'>({
        type: 'string',
        enum: ['namespace', 'interaction', 'key', 'tool'],
        description:
          'One group for the namespace (default), or one per interaction, per key that started the runs, or per tool ' +
          '(its runs are those that called it; tokens and cost are 0: they are the model’s)',
      }),
    ),
  },
  { additionalProperties: false },
);

/** What the runs of a namespace spent over a period, grouped. */
export const UsageReportSchema = Type.Object(
  {
    since: Type.Union([Type.String(), Type.Null()], { description: 'The period asked for (null: from the first run)' }),
    until: Type.Union([Type.String(), Type.Null()], { description: 'null: up to now' }),
    by: Type.String({ description: 'namespace, interaction, key or tool' }),
    groups: Type.Array(
      Type.Object({
        key: Type.Union([Type.String(), Type.Null()], {
          description:
            'The namespace, interaction name, key id or tool name; null: runs no key started (schedules, triggers)',
        }),
        runs: Type.Integer({ description: 'Runs created in the period (by tool: those that called it)' }),
        toolCalls: Type.Integer({
          description: 'Tool calls with a stored result (not those a namespace quota refused: they were not made)',
        }),
        inputTokens: Type.Integer({ description: '0 by tool' }),
        outputTokens: Type.Integer({ description: '0 by tool' }),
        costUsd: Type.Number({ description: 'By the price table (MT_MODEL_PRICES) the runs ran under' }),
      }),
    ),
  },
  { $id: 'UsageReport', description: 'What the runs of the namespace created in a period spent, grouped' },
);

// Quotas per namespace (docs/quotas.md).

const quota = (what: string) =>
  Type.Union([Type.Integer({ minimum: 0, maximum: 2147483647 }), Type.Null()], {
    description: `${what}; null or absent: no quota`,
  });

/** The body of `PUT /v1/namespaces/{name}/quotas`: every quota of the namespace (one left out is none). */
export const SetQuotasBodySchema = Type.Object(
  {
    runsPerDay: Type.Optional(quota('Runs created in a UTC day')),
    toolCallsPerDay: Type.Optional(quota('Tool calls of the runs created in a UTC day')),
    tokensPerMonth: Type.Optional(
      Type.Union([Type.Integer({ minimum: 0, maximum: 9007199254740991 }), Type.Null()], {
        description: 'Model tokens (input + output) of the runs created in a UTC month; null or absent: no quota',
      }),
    ),
  },
  { additionalProperties: false },
);

/** The path of the namespace routes. */
export const NamespaceParamsSchema = Type.Object({ name: Type.String({ minLength: 1, maxLength: 63 }) });

/** A namespace's quotas and the figures they are held to now. */
export const QuotaStandingSchema = Type.Object(
  {
    namespace: Type.String(),
    quotas: Type.Object({
      runsPerDay: Type.Union([Type.Integer(), Type.Null()]),
      toolCallsPerDay: Type.Union([Type.Integer(), Type.Null()]),
      tokensPerMonth: Type.Union([Type.Integer(), Type.Null()]),
    }),
    used: Type.Object(
      {
        runsToday: Type.Integer(),
        toolCallsToday: Type.Integer(),
        tokensThisMonth: Type.Integer(),
      },
      { description: 'GET /v1/usage over the current UTC day (runs, tool calls) and month (tokens)' },
    ),
    dayEndsAt: Type.String({ description: 'When the UTC day ends (ISO 8601)' }),
    monthEndsAt: Type.String({ description: 'When the UTC month ends (ISO 8601)' }),
  },
  { $id: 'QuotaStanding', description: "A namespace's quotas and the figures they are held to now" },
);

/** The audit log's, the usage figures' and the quotas' schemas with an $id (components of the OpenAPI document). */
export const auditWireSchemas = [AuditEntrySchema, AuditPageSchema, UsageReportSchema, QuotaStandingSchema] as const;
