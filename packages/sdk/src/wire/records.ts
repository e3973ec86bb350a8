// The answers of the read routes of versioned resources (lists and one stored version), declared once like
// ./schemas.ts: the server answers with these schemas, the SDK's types are their `Static` types.
import { Type } from 'typebox';
import { timestamp } from './formats.js';
import { knowledgeWireSchemas } from './knowledge.js';
import {
  CreatedKeySchema,
  CreatedNamespaceSchema,
  ExtopCallResultSchema,
  KeyInfoSchema,
  SecretKeyRotationSchema,
  SecretKeyStatusSchema,
} from './access.js';
import { auditWireSchemas } from './audit.js';
import { connectionWireSchemas } from './connections.js';
import { scheduleWireSchemas } from './schedules.js';
import { fileWireSchemas } from './files.js';
import { webhookWireSchemas } from './webhooks.js';
import {
  ActorSchema,
  AgentSchema,
  ApprovalSchema,
  AuthProviderSchema,
  ConnectorSchema,
  DeployPlanSchema,
  DiagnosticSchema,
  ErrorSchema,
  InteractionInputSchema,
  InteractionSchema,
  RunBudgetSchema,
  RunEventSchema,
  RunSchema,
  RunSummarySchema,
  RunUsageSchema,
  SecretSchema,
  ToolDefinitionSchema,
  ToolPinSchema,
  ToolSchema,
  ref,
  VersionStateSchema,
  VersionSummarySchema,
} from './schemas.js';

const summaryProperties = { name: Type.String(), latestVersion: Type.Integer(), enabled: Type.Boolean() };

/** A connector, agent or interaction in a list. */
export const ResourceSummarySchema = Type.Object(summaryProperties, { $id: 'ResourceSummary' });

/** A tool in a list, and whether a call of it can be made at all. */
export const ExtopSummarySchema = Type.Object(
  {
    ...summaryProperties,
    callable: Type.Boolean({
      description: 'False while the latest version or its pinned connector version is disabled',
    }),
    reason: Type.Optional(Type.String({ description: 'Why the tool cannot be called' })),
  },
  { $id: 'ExtopSummary' },
);

const versionProperties = {
  name: Type.String(),
  version: Type.Integer(),
  enabled: Type.Boolean(),
  createdAt: timestamp(),
  hash: Type.String(),
};

/** One stored version of an auth provider, with its compiled resource (the client secret by name only). */
export const AuthProviderRecordSchema = Type.Object(
  { ...versionProperties, resource: ref(AuthProviderSchema) },
  { $id: 'AuthProviderRecord' },
);

/** One stored version of a connector, with its compiled resource. */
export const ConnectorRecordSchema = Type.Object(
  { ...versionProperties, resource: ref(ConnectorSchema) },
  { $id: 'ConnectorRecord' },
);

/** One stored version of a tool, the connector version it pins, and what a model is sent. */
export const ExtopRecordSchema = Type.Object(
  {
    ...versionProperties,
    connector: Type.Object({ name: Type.String(), version: Type.Integer() }),
    resource: ref(ToolSchema),
    definition: Type.Optional(ref(ToolDefinitionSchema)),
  },
  { $id: 'ExtopRecord' },
);

/** One stored version of an agent: its model, instructions and the tool versions it pins. */
export const AgentRecordSchema = Type.Object(
  {
    ...versionProperties,
    model: Type.String(),
    summary: Type.Optional(Type.String()),
    instructions: Type.String(),
    tools: Type.Array(ref(ToolPinSchema)),
    resource: ref(AgentSchema),
  },
  { $id: 'AgentRecord' },
);

/** One stored version of an interaction, with what a run of it needs. */
export const InteractionRecordSchema = Type.Object(
  {
    ...versionProperties,
    agent: Type.Object(
      { name: Type.String(), agent: Type.String(), version: Type.Integer() },
      { description: 'The agent as the interaction names it, the agent resource and its pinned version' },
    ),
    task: Type.String(),
    inputs: Type.Array(ref(InteractionInputSchema)),
    tools: Type.Array(ref(ToolPinSchema), {
      description: "Every tool a run may call: the agent's own and the interaction's functions.openApi",
    }),
    resource: ref(InteractionSchema),
  },
  { $id: 'InteractionRecord' },
);

/** One page of runs, newest first, as summaries; `nextCursor` is null on the last one. */
export const RunPageSchema = Type.Object(
  { runs: Type.Array(ref(RunSummarySchema)), nextCursor: Type.Union([Type.String(), Type.Null()]) },
  { $id: 'RunPage' },
);

/** Every schema with an `$id`, in the order a server adds them (a schema after those it refers to). */
export const wireSchemas = [
  DiagnosticSchema,
  ErrorSchema,
  AuthProviderSchema,
  ConnectorSchema,
  ToolSchema,
  ToolDefinitionSchema,
  DeployPlanSchema,
  VersionStateSchema,
  VersionSummarySchema,
  SecretSchema,
  AgentSchema,
  InteractionSchema,
  InteractionInputSchema,
  ToolPinSchema,
  ActorSchema,
  ApprovalSchema,
  RunUsageSchema,
  RunBudgetSchema,
  RunSchema,
  RunSummarySchema,
  RunEventSchema,
  ResourceSummarySchema,
  ExtopSummarySchema,
  AuthProviderRecordSchema,
  ConnectorRecordSchema,
  ExtopRecordSchema,
  AgentRecordSchema,
  InteractionRecordSchema,
  RunPageSchema,
  KeyInfoSchema,
  CreatedKeySchema,
  CreatedNamespaceSchema,
  ExtopCallResultSchema,
  SecretKeyStatusSchema,
  SecretKeyRotationSchema,
  ...fileWireSchemas,
  ...connectionWireSchemas,
  ...scheduleWireSchemas,
  ...auditWireSchemas,
  ...knowledgeWireSchemas,
  ...webhookWireSchemas,
] as const;
