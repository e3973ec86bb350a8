import type { Agent, Connector, Interaction, Json, Tool, ToolDefinition } from './wire/resources.js';

/** One file of a config repo, its path relative to the repo root with `/`. */
export interface DeployFile {
  path: string;
  content: string;
}

/** What a deploy did (or would do) to one resource. */
export interface DeployChange {
  kind: 'connector' | 'tool' | 'agent' | 'interaction';
  name: string;
  action: 'create' | 'update' | 'unchanged';
  /** The version after the deploy (the one it would create, for a dry run). */
  version: number;
  previousVersion?: number;
  /** What changed, in words. */
  changed?: string[];
  /** The subset of `changed` that can break a working agent. */
  breaking: string[];
  [field: string]: unknown;
}

/** The answer of `POST /v1/deploy`. */
export interface DeployPlan {
  /** `false` for a dry run. */
  applied: boolean;
  changes: DeployChange[];
  [field: string]: unknown;
}

/** A connector or tool in a list. */
export interface ResourceSummary {
  name: string;
  latestVersion: number;
  enabled: boolean;
}

/** A tool in a list: {@link ResourceSummary}, and whether a call of it can be made at all. */
export interface ExtopSummary extends ResourceSummary {
  /** False while the latest version, or the connector version it is pinned to, is disabled. */
  callable: boolean;
  /** Why it is not callable, such as `connector orders-get version 1 is disabled`. */
  reason?: string;
}

/** One stored version of a connector or tool. */
export interface VersionInfo {
  version: number;
  enabled: boolean;
  createdAt: string;
}

/** The answer of enabling or disabling a version. */
export interface VersionState {
  name: string;
  version: number;
  enabled: boolean;
}

/** One stored version of a connector, with its compiled resource. */
export interface ConnectorRecord {
  name: string;
  version: number;
  enabled: boolean;
  createdAt: string;
  hash: string;
  resource: Connector;
}

/** One stored version of a tool (extop), with what the model sees. */
export interface ExtopRecord {
  name: string;
  version: number;
  enabled: boolean;
  createdAt: string;
  hash: string;
  connector: { name: string; version: number };
  resource: Tool;
  /** The model-facing definition: exactly what a model is sent. */
  definition: ToolDefinition;
}

/** The answer of one tool call through the gateway. */
export interface ExtopCallResult {
  ok: boolean;
  status?: number;
  body?: Json;
  /** Set when the body was cut at `limit` bytes (it is then text); `size` is the whole size when it was declared. */
  truncated?: { limit: number; size?: number };
  error?: string;
  code?: string;
}

/** A secret as the API shows it: never its value. */
export interface SecretInfo {
  id: string;
  name: string;
  createdAt: string;
  updatedAt: string;
}

/** The role of an API key. */
export type KeyRole = 'admin' | 'user';

/** An API key as listed: never the key itself. */
export interface KeyInfo {
  id: string;
  name?: string | null;
  role: KeyRole;
  createdAt: string;
}

/** A key just created: `key` is shown this once. */
export interface CreatedKey extends KeyInfo {
  key: string;
}

/** A namespace just created, with its first admin key. */
export interface CreatedNamespace {
  name: string;
  key: { id: string; key: string; role: 'admin' };
}

/** A tool version a resource pins. */
export interface ToolPin {
  name: string;
  version: number;
}

/** An agent or interaction in a list. */
export type RunnableSummary = ResourceSummary;

/** One stored version of an agent. */
export interface AgentRecord {
  name: string;
  version: number;
  enabled: boolean;
  createdAt: string;
  hash: string;
  /** `provider:name`, for example `openai:gpt-4o-mini`. */
  model: string;
  summary?: string;
  instructions: string;
  /** The tool versions this agent version pins. */
  tools: ToolPin[];
  resource: Agent;
}

/** One input a run of an interaction gives. */
export interface InteractionInput {
  name: string;
  /** `prompt` fills `%%name%%` in the task; `binding` is written into a tool call; `auth` is a secret id. */
  kind: 'prompt' | 'binding' | 'auth';
  required: boolean;
  description?: string;
  /** A prompt's default text or a binding's default JSON value. */
  default?: Json;
  /** Binding and auth inputs: the tool they feed, and the agent whose tool it is. */
  function?: string;
  agent?: string;
  /** Binding inputs: the body field or parameter written, and where. */
  target?: string;
  type?: 'request' | 'query' | 'path';
  /** Auth inputs: the header sent, and the secret name used when the run gives none. */
  header?: string;
  secret?: string;
}

/** One stored version of an interaction, with what a run of it needs. */
export interface InteractionRecord {
  name: string;
  version: number;
  enabled: boolean;
  createdAt: string;
  hash: string;
  /** The agent's name in the interaction, the agent resource, and the version pinned. */
  agent: { name: string; agent: string; version: number };
  task: string;
  inputs: InteractionInput[];
  /** Every tool a run may call: the agent's own and the interaction's `functions.openApi`. */
  tools: ToolPin[];
  resource: Interaction;
}

// Runs and approvals: the same shapes as packages/engine/src/api/types.ts (a client package copies them
// rather than import the engine).

/** Where a run stands. */
export type RunStatus = 'Running' | 'PendingApproval' | 'Completed' | 'Failed' | 'Cancelled';

/** Where an approval stands. */
export type ApprovalStatus = 'Pending' | 'Approved' | 'Rejected' | 'Expired';

/** A pinned version a run uses. */
export interface VersionRef {
  kind: 'connector' | 'tool' | 'agent' | 'interaction';
  name: string;
  version: number;
}

/** The API key that answered an approval: its id and name. */
export interface Actor {
  keyId: string;
  keyName: string;
}

/** One call waiting for a person, as it is shown (never a secret). */
export interface ApprovalView {
  id: string;
  /** The run that waits on it; null for an approval made outside a run. */
  runId: string | null;
  functionName: string;
  /** JSON text: `{ request?, additionalInputs? }`, the model's arguments and the run inputs written into the call. */
  argumentsJson: string;
  status: ApprovalStatus;
  /** The agent's name in the interaction. */
  agentName: string | null;
  /** The reason given with a rejection. */
  reason: string | null;
  answeredBy: Actor | null;
  answeredAt: string | null;
  expiresAt: string | null;
  createdAt: string;
}

/** Why a run failed. */
export interface RunError {
  code: string;
  message: string;
}

/** A run of an interaction. */
export interface RunView {
  id: string;
  interaction: { name: string; version: number };
  status: RunStatus;
  /** False for an app run: nobody can be asked to approve. */
  interactive: boolean;
  /** The inputs as given (secret inputs are secret ids, never values). */
  inputs: Record<string, unknown>;
  /** The final answer of a Completed run. */
  result: string | null;
  error: RunError | null;
  /** The approval the run waits on while PendingApproval; null otherwise. */
  pendingApproval: ApprovalView | null;
  /** Every version the run uses, pinned when it started. */
  versions: VersionRef[];
  createdAt: string;
  updatedAt: string;
}

/** The kinds of stored steps of a run. */
export type RunEventType =
  | 'run-started'
  | 'model-response'
  | 'tool-call-started'
  | 'tool-result'
  | 'approval-requested'
  | 'approval-answered'
  | 'run-completed'
  | 'run-failed'
  | 'run-cancelled';

/** One stored step of a run; `seq` counts from 1 and is the SSE event id. */
export interface RunEvent {
  seq: number;
  type: RunEventType;
  at: string;
  data: Record<string, unknown>;
}

/** One page of runs, newest first. */
export interface RunPage {
  runs: RunView[];
  /** Pass it as `cursor` for the next page; null on the last one. */
  nextCursor: string | null;
}

/** Filters of `mt.interactionRuns.list`. */
export interface ListRunsParams {
  interaction?: string;
  status?: RunStatus;
  /** At most this many (default 50, at most 200). */
  limit?: number;
  cursor?: string;
}

/** Filters of `mt.approvals.list`. */
export interface ListApprovalsParams {
  /** Default `Pending`. */
  status?: ApprovalStatus | 'all';
  runId?: string;
  limit?: number;
}
