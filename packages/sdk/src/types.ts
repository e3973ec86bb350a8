import type { Agent, Connector, Interaction, Json, Tool, ToolDefinition } from '@maitento/lang';

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
