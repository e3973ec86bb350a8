// The engine's public contract: what the server, the CLI (through the SDK) and the tests see of runs,
// their events and approvals. @maitento/sdk declares the same shapes as TypeBox schemas (the wire's one
// declaration); packages/server/src/schemas/same-types.ts fails the build when the two differ.

import type { RunStatus } from '@maitento/store';
import type { RunEventType } from '../journal/events.js';

// Declared once below the wire: the statuses by the store (whose statements use them), the event types by the
// journal's union of events.
export type { RunStatus } from '@maitento/store';
export type { RunEventType } from '../journal/events.js';

/** Where an approval stands. */
export type ApprovalStatus = 'Pending' | 'Approved' | 'Rejected' | 'Expired';

/** A pinned version a run uses. */
export interface VersionRef {
  kind: 'connector' | 'tool' | 'agent' | 'interaction';
  name: string;
  version: number;
}

/** Who answered an approval or cancelled a run: an API key of the namespace. */
export interface Actor {
  keyId: string;
  keyName: string;
}

/** One approval, as a person is shown it (never a secret). */
export interface ApprovalView {
  id: string;
  /** The run that waits on it; null for an approval made outside a run. */
  runId: string | null;
  functionName: string;
  /** JSON text: `{ request?, additionalInputs? }`, the model's arguments and the run inputs written into the call. */
  argumentsJson: string;
  status: ApprovalStatus;
  /** The agent's name in the interaction (`agent.name`). */
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

/** A run of an interaction, as the API returns it. */
export interface RunView {
  id: string;
  interaction: { name: string; version: number };
  status: RunStatus;
  /** False for an app run: nobody can be asked to approve. */
  interactive: boolean;
  /**
   * The inputs as given (secret inputs are secret ids, never values). A secret input is `{ "secret": true }` to a
   * key that may not use its secret (docs/security.md, "Who may use a secret").
   */
  inputs: Record<string, unknown>;
  /**
   * The final answer of a Completed run: its text, or the object an interaction with `result.schema` declared
   * (validated against it).
   */
  result: string | { [key: string]: unknown } | null;
  error: RunError | null;
  /**
   * The approval the run waits on while PendingApproval; null otherwise. A parent waiting on a child run shows the
   * child's (its `runId` the child's, its `agentName` the agent that asks).
   */
  pendingApproval: ApprovalView | null;
  /** The run whose tool call started this one (an agent handed a task); null for a run started by a person or a program. */
  parentRunId: string | null;
  /** The agent a child run plays; null for a run of the interaction's own agent. */
  agent: string | null;
  /** Every version the run uses, pinned when it started. */
  versions: VersionRef[];
  createdAt: string;
  updatedAt: string;
}

/** A run as a list shows it: no inputs or versions, its result cut to a summary (`GET /v1/runs/{id}` has all). */
export interface RunSummary {
  id: string;
  interaction: { name: string; version: number };
  status: RunStatus;
  /** False for an app run: nobody can be asked to approve. */
  interactive: boolean;
  /** The first 200 characters of the final answer of a Completed run. */
  result: string | null;
  /** True when the result is longer than the summary in `result`. */
  resultTruncated: boolean;
  error: RunError | null;
  /** The id of the approval the run waits on while PendingApproval (a child run's, for a parent); null otherwise. */
  pendingApprovalId: string | null;
  /** The run whose tool call started this one; null for a run started by a person or a program. */
  parentRunId: string | null;
  /** The agent a child run plays; null for a run of the interaction's own agent. */
  agent: string | null;
  createdAt: string;
  updatedAt: string;
}

/** One stored step of a run as the wire shows it (the journal's `JournalEvent`, its data an open map); `seq` counts from 1 and is the SSE event id. */
export interface RunEvent {
  seq: number;
  type: RunEventType;
  at: string;
  data: Record<string, unknown>;
}

/** Who reads a run: the API key of the request (a secret input is shown to it only when it may use the secret). */
export interface RunViewer {
  keyId: string;
}

/** The body of `POST /v1/interactions/{name}/runs`. */
export interface StartRunInput {
  /** Prompt inputs, binding inputs and auth inputs (secret ids) by name. */
  inputs?: Record<string, unknown>;
  /** True by default; false for an app run with nobody to ask. */
  interactive?: boolean;
  /** The interaction version; the latest when absent. */
  version?: number;
}

/** Filters of `GET /v1/runs`. */
export interface ListRunsQuery {
  interaction?: string;
  /** Only runs whose pinned versions include this agent. */
  agent?: string;
  status?: RunStatus;
  /** At most this many (default 50, at most 200). */
  limit?: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
}

/** One page of runs, newest first, as summaries. */
export interface RunPage {
  runs: RunSummary[];
  nextCursor: string | null;
}

/** Filters of `GET /v1/approvals`. */
export interface ListApprovalsQuery {
  /** Default `Pending`. */
  status?: ApprovalStatus | 'all';
  runId?: string;
  limit?: number;
}

/** An answer to an approval. */
export interface ApprovalAnswer {
  decision: 'approve' | 'reject';
  /** Required with `reject`. */
  reason?: string;
  by: Actor;
}
