import type { Static } from 'typebox';
import type {
  ApprovalAnswerBodySchema,
  ApprovalRejectBodySchema,
  CreateKeyBodySchema,
  CreateNamespaceBodySchema,
  CreateSecretBodySchema,
  DeployFileSchema,
  ListApprovalsQuerySchema,
  ListRunEventsQuerySchema,
  ListRunsQuerySchema,
  RotateSecretBodySchema,
  RotateSecretKeyBodySchema,
  RunAnswerBodySchema,
  RunRejectBodySchema,
} from './wire/requests.js';
import type { CreatedKeySchema, CreatedNamespaceSchema, ExtopCallResultSchema, KeyInfoSchema } from './wire/access.js';
import type {
  AgentRecordSchema,
  AuthProviderRecordSchema,
  ConnectorRecordSchema,
  ExtopRecordSchema,
  ExtopSummarySchema,
  InteractionRecordSchema,
  ResourceSummarySchema,
  RunPageSchema,
} from './wire/records.js';
import type {
  ActorSchema,
  APPROVAL_STATUSES,
  ApprovalSchema,
  DeployChangeSchema,
  DeployPlanSchema,
  InteractionInputSchema,
  RUN_EVENT_TYPES,
  RUN_STATUSES,
  RunErrorSchema,
  RunEventSchema,
  RunSchema,
  RunSummarySchema,
  SecretSchema,
  ToolPinSchema,
  VersionRefSchema,
  VersionStateSchema,
  VersionSummarySchema,
} from './wire/schemas.js';

/** One file of a config repo, its path relative to the repo root with `/`. */
export type DeployFile = Static<typeof DeployFileSchema>;

/** What a deploy did (or would do) to one resource. */
export type DeployChange = Static<typeof DeployChangeSchema>;

/** The answer of `POST /v1/deploy`. */
export type DeployPlan = Static<typeof DeployPlanSchema>;

/** A connector or tool in a list. */
export type ResourceSummary = Static<typeof ResourceSummarySchema>;

/** A tool in a list: {@link ResourceSummary}, and whether a call of it can be made at all. */
export type ExtopSummary = Static<typeof ExtopSummarySchema>;

/** One stored version of a connector or tool. */
export type VersionInfo = Static<typeof VersionSummarySchema>;

/** The answer of enabling or disabling a version. */
export type VersionState = Static<typeof VersionStateSchema>;

/** One stored version of an auth provider, with its compiled resource (the client secret by name only). */
export type AuthProviderRecord = Static<typeof AuthProviderRecordSchema>;

/** One stored version of a connector, with its compiled resource. */
export type ConnectorRecord = Static<typeof ConnectorRecordSchema>;

/** One stored version of a tool (extop), with what the model sees. */
export type ExtopRecord = Static<typeof ExtopRecordSchema>;

/** The answer of one tool call through the gateway. */
export type ExtopCallResult = Static<typeof ExtopCallResultSchema>;

/** A secret as the API shows it: never its value. */
export type SecretInfo = Static<typeof SecretSchema>;

/** Parameters of `mt.keys.create`: the role, and a name to tell the key by. */
export type CreateKeyParams = Static<typeof CreateKeyBodySchema>;

/** The role of an API key. */
export type KeyRole = CreateKeyParams['role'];

/** Parameters of `mt.namespaces.create`: a name of lower-case letters, digits and `-`. */
export type CreateNamespaceParams = Static<typeof CreateNamespaceBodySchema>;

/** Parameters of `mt.secrets.create`. */
export type CreateSecretParams = Static<typeof CreateSecretBodySchema>;

/** Parameters of `mt.secrets.rotate`: the new value. */
export type RotateSecretParams = Static<typeof RotateSecretBodySchema>;

/** Parameters of `mt.secrets.rotateMasterKey`: how many secrets one transaction re-wraps (default 100). */
export type RotateMasterKeyParams = Static<typeof RotateSecretKeyBodySchema>;

/** An API key as listed: never the key itself. */
export type KeyInfo = Static<typeof KeyInfoSchema>;

/** A key just created: `key` is shown this once. */
export type CreatedKey = Static<typeof CreatedKeySchema>;

/** A namespace just created, with its first admin key. */
export type CreatedNamespace = Static<typeof CreatedNamespaceSchema>;

/** A tool version a resource pins. */
export type ToolPin = Static<typeof ToolPinSchema>;

/** An agent or interaction in a list. */
export type RunnableSummary = ResourceSummary;

/** One stored version of an agent. */
export type AgentRecord = Static<typeof AgentRecordSchema>;

/** One input a run of an interaction gives. */
export type InteractionInput = Static<typeof InteractionInputSchema>;

/** One stored version of an interaction, with what a run of it needs. */
export type InteractionRecord = Static<typeof InteractionRecordSchema>;

// Runs and approvals.

/** Where a run stands. */
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Where an approval stands. */
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** A pinned version a run uses. */
export type VersionRef = Static<typeof VersionRefSchema>;

/** The API key that answered an approval: its id and name. */
export type Actor = Static<typeof ActorSchema>;

/** One call waiting for a person, as it is shown (never a secret). */
export type ApprovalView = Static<typeof ApprovalSchema>;

/** Why a run failed. */
export type RunError = Static<typeof RunErrorSchema>;

/** A run of an interaction. */
export type RunView = Static<typeof RunSchema>;

/** A run in a list: no inputs or versions, its result cut to 200 characters (`resultTruncated` says so). */
export type RunSummary = Static<typeof RunSummarySchema>;

/** The kinds of stored steps of a run. */
export type RunEventType = (typeof RUN_EVENT_TYPES)[number];

/** One stored step of a run; `seq` counts from 1 and is the SSE event id. */
export type RunEvent = Static<typeof RunEventSchema>;

/** One page of runs, newest first; pass `nextCursor` as `cursor` for the next page. */
export type RunPage = Static<typeof RunPageSchema>;

/**
 * Filters of `mt.interactionRuns.list`: `interaction`, `agent` (runs that pinned it), `tool` (runs that called it),
 * `status`, `limit` (default 50, at most 200) and `cursor` (the `nextCursor` of the previous page).
 */
export type ListRunsParams = Static<typeof ListRunsQuerySchema>;

/**
 * Parameters of `mt.interactionRuns.listEvents`: only events with `seq` above `after` (default 0), at most
 * `limit` of them (default 100, at most 1000).
 */
export type ListRunEventsParams = Static<typeof ListRunEventsQuerySchema>;

/**
 * The body of answering a run's approval: `approvalId` (default: the one the run waits on) and, to reject,
 * the `reason` the model is told.
 */
export type RunAnswerParams = Static<typeof RunAnswerBodySchema>;

/** The body of rejecting a run's approval: `approvalId` (default: the one the run waits on) and the `reason`. */
export type RunRejectParams = Static<typeof RunRejectBodySchema>;

/** Filters of `mt.approvals.list`: `status` (default `Pending`), `runId`, `limit`. */
export type ListApprovalsParams = Static<typeof ListApprovalsQuerySchema>;

/** The body of answering an approval: the `reason`, required to reject. */
export type ApprovalAnswerParams = Static<typeof ApprovalAnswerBodySchema>;

/** The body of rejecting an approval: the `reason` the model is told. */
export type ApprovalRejectParams = Static<typeof ApprovalRejectBodySchema>;
