// What a request carries (path parameters, query strings, bodies), declared once like the answers in
// ./schemas.ts: the server validates every request with these schemas (so their limits are the API's limits
// and its 400 messages), @fastify/swagger publishes them in /openapi.json, and the SDK's parameter types are
// their `Static` types (../types.ts and the resources' parameter types). The engine's and the store's input types are checked equal to them when
// the server compiles (packages/server/src/schemas/same-types.ts). They have no `$id`: each is written inline
// into the operation that takes it. `requestSchemas` names them by operationId.
import { type Static, type TSchema, Type } from 'typebox';
import {
  CreateFileSystemBodySchema,
  FileParamsSchema,
  ListFilesQuerySchema,
  MoveFileBodySchema,
  WriteFileBodySchema,
} from './files.js';
import {
  AddDocumentQuerySchema,
  CreateKnowledgeBaseBodySchema,
  DocumentParamsSchema,
  SearchKnowledgeBaseBodySchema,
  SearchKnowledgeBodySchema,
} from './knowledge.js';
import { APPROVAL_STATUSES, type Json, RUN_STATUSES, stringEnum } from './schemas.js';

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
    role: stringEnum(['admin', 'user']),
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
  { files: Type.Array(DeployFileSchema, { maxItems: 20000 }), dryRun: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

/** The body of `POST /v1/extops/{name}/call`. */
export const ExtopCallBodySchema = Type.Object(
  {
    arguments: Type.Unsafe<{ [key: string]: Json }>({ type: 'object', additionalProperties: true }),
    version: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);

// Runs and approvals.

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
  },
  { additionalProperties: false },
);

/** The query of `GET /v1/runs`. */
export const ListRunsQuerySchema = Type.Object(
  {
    interaction: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
    /** Only runs whose pinned versions include this agent. */
    agent: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
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

/** The body of `POST /v1/runs/{id}/approve` (it may be sent empty). */
export const RunAnswerBodySchema = Type.Object(
  { approvalId: Type.Optional(answeredApprovalId), reason: Type.Optional(rejectionReason) },
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
  { reason: Type.Optional(rejectionReason) },
  { additionalProperties: false },
);

/** The body of `POST /v1/approvals/{id}/reject`: the `reason` is required. */
export const ApprovalRejectBodySchema = Type.Object({ reason: rejectionReason }, { additionalProperties: false });

/** What one operation takes besides headers: its path parameters, query and body schemas. */
export interface RequestSchemas {
  params?:
    | typeof NameParamsSchema
    | typeof VersionParamsSchema
    | typeof IdParamsSchema
    | typeof FileParamsSchema
    | typeof DocumentParamsSchema;
  querystring?:
    | typeof ListRunsQuerySchema
    | typeof RunEventsQuerySchema
    | typeof ListRunEventsQuerySchema
    | typeof ListApprovalsQuerySchema
    | typeof ListFilesQuerySchema
    | typeof AddDocumentQuerySchema;
  body?:
    | typeof CreateNamespaceBodySchema
    | typeof CreateKeyBodySchema
    | typeof CreateSecretBodySchema
    | typeof RotateSecretBodySchema
    | typeof RotateSecretKeyBodySchema
    | typeof DeployBodySchema
    | typeof ExtopCallBodySchema
    | typeof StartRunBodySchema
    | typeof CancelRunBodySchema
    | typeof SendRunMessageBodySchema
    | typeof RunAnswerBodySchema
    | typeof RunRejectBodySchema
    | typeof ApprovalAnswerBodySchema
    | typeof ApprovalRejectBodySchema
    | typeof CreateFileSystemBodySchema
    | typeof MoveFileBodySchema
    | typeof WriteFileBodySchema
    | typeof CreateKnowledgeBaseBodySchema
    | typeof SearchKnowledgeBaseBodySchema
    | typeof SearchKnowledgeBodySchema;
}

/**
 * Every operation of the REST API by operationId, with the request schemas it takes (`{}`: none). The server
 * registers each route with these, and packages/server/test/openapi-sdk.test.ts checks that /openapi.json
 * publishes exactly them.
 */
export const requestSchemas = {
  getHealth: {},
  createNamespace: { body: CreateNamespaceBodySchema },
  createKey: { body: CreateKeyBodySchema },
  listKeys: {},
  deleteKey: { params: IdParamsSchema },
  deploy: { body: DeployBodySchema },
  listConnectors: {},
  getConnector: { params: NameParamsSchema },
  listConnectorVersions: { params: NameParamsSchema },
  getConnectorVersion: { params: VersionParamsSchema },
  disableConnectorVersion: { params: VersionParamsSchema },
  enableConnectorVersion: { params: VersionParamsSchema },
  listExtops: {},
  getExtop: { params: NameParamsSchema },
  listExtopVersions: { params: NameParamsSchema },
  getExtopVersion: { params: VersionParamsSchema },
  disableExtopVersion: { params: VersionParamsSchema },
  enableExtopVersion: { params: VersionParamsSchema },
  callExtop: { params: NameParamsSchema, body: ExtopCallBodySchema },
  listAgents: {},
  getAgent: { params: NameParamsSchema },
  listAgentVersions: { params: NameParamsSchema },
  getAgentVersion: { params: VersionParamsSchema },
  listInteractions: {},
  getInteraction: { params: NameParamsSchema },
  listInteractionVersions: { params: NameParamsSchema },
  getInteractionVersion: { params: VersionParamsSchema },
  createSecret: { body: CreateSecretBodySchema },
  listSecrets: {},
  rotateSecret: { params: IdParamsSchema, body: RotateSecretBodySchema },
  deleteSecret: { params: IdParamsSchema },
  getSecretKeyStatus: {},
  rotateSecretKey: { body: RotateSecretKeyBodySchema },
  startRun: { params: NameParamsSchema, body: StartRunBodySchema },
  listRuns: { querystring: ListRunsQuerySchema },
  getRun: { params: IdParamsSchema },
  listRunEvents: { params: IdParamsSchema, querystring: ListRunEventsQuerySchema },
  streamRunEvents: { params: IdParamsSchema, querystring: RunEventsQuerySchema },
  cancelRun: { params: IdParamsSchema, body: CancelRunBodySchema },
  sendRunMessage: { params: IdParamsSchema, body: SendRunMessageBodySchema },
  approveRun: { params: IdParamsSchema, body: RunAnswerBodySchema },
  rejectRun: { params: IdParamsSchema, body: RunRejectBodySchema },
  listApprovals: { querystring: ListApprovalsQuerySchema },
  getApproval: { params: IdParamsSchema },
  approveApproval: { params: IdParamsSchema, body: ApprovalAnswerBodySchema },
  rejectApproval: { params: IdParamsSchema, body: ApprovalRejectBodySchema },
  createFileSystem: { body: CreateFileSystemBodySchema },
  listFileSystems: {},
  getFileSystem: { params: IdParamsSchema },
  deleteFileSystem: { params: IdParamsSchema },
  listFiles: { params: IdParamsSchema, querystring: ListFilesQuerySchema },
  writeFile: { params: IdParamsSchema, body: WriteFileBodySchema },
  putFile: { params: FileParamsSchema },
  getFile: { params: FileParamsSchema },
  deleteFile: { params: FileParamsSchema },
  moveFile: { params: IdParamsSchema, body: MoveFileBodySchema },
  createKnowledgeBase: { body: CreateKnowledgeBaseBodySchema },
  listKnowledgeBases: {},
  getKnowledgeBase: { params: IdParamsSchema },
  deleteKnowledgeBase: { params: IdParamsSchema },
  addKnowledgeDocument: { params: IdParamsSchema, querystring: AddDocumentQuerySchema },
  listKnowledgeDocuments: { params: IdParamsSchema },
  getKnowledgeDocument: { params: DocumentParamsSchema },
  deleteKnowledgeDocument: { params: DocumentParamsSchema },
  searchKnowledgeBase: { params: IdParamsSchema, body: SearchKnowledgeBaseBodySchema },
  searchKnowledge: { body: SearchKnowledgeBodySchema },
} satisfies Record<string, RequestSchemas>;

/** The operationId of every operation of the REST API. */
export type OperationId = keyof typeof requestSchemas;

/**
 * The types of what a request with `schemas` carries, in the shape of fastify's route generic (`Params`,
 * `Querystring`, `Body`): the server types its handlers with these, so they are the schemas' own types.
 */
export type RequestTypes<S extends RequestSchemas> = (S extends { params: infer P extends TSchema }
  ? { Params: Static<P> }
  : unknown) &
  (S extends { querystring: infer Q extends TSchema } ? { Querystring: Static<Q> } : unknown) &
  (S extends { body: infer B extends TSchema } ? { Body: Static<B> } : unknown);

/** The request types of the operation `Op`. */
export type OperationRequest<Op extends OperationId> = RequestTypes<(typeof requestSchemas)[Op]>;
