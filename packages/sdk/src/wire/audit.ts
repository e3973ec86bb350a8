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
      kind: stringEnum(['key', 'system']),
      id: Type.String({ description: 'The key id, or `system`' }),
      role: Type.Union([Type.String(), Type.Null()], { description: "The key's role then (null for the system)" }),
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
  actor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'A key id, or system' })),
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

/** The schemas of the audit log with an `$id`, in the order a server adds them. */
export const auditWireSchemas = [AuditEntrySchema, AuditPageSchema] as const;
