import type { Connector, Json, Tool, ToolDefinition } from '@maitento/lang';

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
