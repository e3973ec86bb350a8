// A run's events as a typed union, with one constructor per kind: every event the engine stores is built here,
// and the status change an event implies is decided here too (a run-failed always fails the run, and so on).
// The wire declares the same types by name (@maitento/sdk RUN_EVENT_TYPES; `RunEventType` below is checked equal to
// it); the wire's `data` stays an open map, since a client must read events stored by older versions too.
import type { PreparedRequestView } from '@maitento/gateway';
import type { RUN_EVENT_TYPES } from '@maitento/sdk/wire';
import type { ApprovalRecord, RunStatusChange } from '@maitento/store';
import type { ApprovalAnswer, ApprovalView, VersionRef } from '../api/types.js';

/** A call as the events name it: the model's id (for display), its index in the turn (its identity), its tool. */
export type EventCall = { id: string; index: number; name: string; arguments?: unknown };

/** What a model turn answered: the data of `model-response` without its step. */
export type ModelResponse = {
  text: string;
  toolCalls: { id: string; name: string; arguments: unknown }[];
  usage: { inputTokens: number | null; outputTokens: number | null };
  durationMs: number;
  model: string;
  scripted: boolean;
};

/** A tool call's stored outcome, as `tool-result` carries it. */
export type ToolResultData = {
  toolCallId: string;
  /** The call's index in its turn; events stored before schema 9 lack it (readers fall back to `toolCallId`). */
  index: number;
  name: string;
  ok: boolean;
  status: number | null;
  result: string;
  code: string | null;
  durationMs: number;
};

/** One event of a run's journal, before it is stored. */
export type RunEventInput =
  | {
      type: 'run-started';
      data: {
        interaction: { name: string; version: number };
        versions: VersionRef[];
        inputs: Record<string, unknown>;
        interactive: boolean;
        /** A child run's: the parent's call that started it, the agent it plays and its task. */
        parent?: { runId: string; step: number; index: number; agent: string; task: string };
      };
    }
  | { type: 'model-response'; data: ModelResponse & { step: number } }
  | {
      type: 'tool-call-started';
      /** `childRunId`: the run a call handing a task to an agent started (agents as tools). */
      data: { toolCallId: string; index: number; name: string; arguments: unknown; childRunId?: string };
    }
  | { type: 'tool-result'; data: ToolResultData }
  | {
      type: 'approval-requested';
      /** `request`: the prepared call's masked view (method, final URL, headers, body) a person approves; absent before schema 10. */
      data: { toolCallId: string; index: number; approval: ApprovalView; request?: PreparedRequestView };
    }
  | {
      type: 'approval-answered';
      data: {
        approvalId: string;
        toolCallId: string | null;
        index: number | null;
        decision: ApprovalAnswer['decision'];
        reason: string | null;
        by: { keyId: string; keyName: string };
        at: string | null;
      };
    }
  | { type: 'run-waiting'; data: { toolCallIds: string[] } }
  | { type: 'result-invalid'; data: { step: number; errors: string[] } }
  /**
   * A conversation's reply (`result`, as `run-completed` has it) is out: the run waits for the next message until
   * `idleUntil` (WaitingForInput).
   */
  | { type: 'input-requested'; data: { step: number; idleUntil: string; result: string; structured?: true } }
  /** The next message of a conversation (the run becomes Running again). */
  | { type: 'user-message'; data: { text: string; by: { keyId: string; keyName: string } } }
  /** Long conversation: the oldest turns were left out of what the model is sent (docs/runs.md). */
  | { type: 'history-trimmed'; data: { step: number; turnsLeftOut: number; toolResultsCut: number } }
  /** A conversation ended (it becomes Completed, its result the last reply): `idle` past its `maxIdle`. */
  | { type: 'conversation-ended'; data: { reason: 'idle' } }
  /** `structured`: the result is the JSON text of an object matching the interaction's `result.schema`. */
  | { type: 'run-completed'; data: { result: string; scripted: boolean; structured?: true } }
  | { type: 'run-failed'; data: { code: string; message: string } }
  | { type: 'run-cancelled'; data: Record<string, never> };

/** One stored event of a run's journal; `seq` counts from 1. */
export type JournalEvent = RunEventInput & { seq: number; at: string };

/** The kinds of events. */
export type RunEventType = RunEventInput['type'];

type WireRunEventType = (typeof RUN_EVENT_TYPES)[number];

/** Compiles only while the kinds of this union are exactly the wire's (@maitento/sdk's RUN_EVENT_TYPES). */
const SAME_KINDS_AS_THE_WIRE: [RunEventType] extends [WireRunEventType]
  ? [WireRunEventType] extends [RunEventType]
    ? true
    : false
  : false = true;
void SAME_KINDS_AS_THE_WIRE;

/** The first event of a run. */
export function runStarted(data: Extract<RunEventInput, { type: 'run-started' }>['data']): RunEventInput {
  return { type: 'run-started', data };
}

/** A model turn's answer, as turn `step` (from 1). */
export function modelResponse(step: number, response: ModelResponse): RunEventInput {
  return { type: 'model-response', data: { step, ...response } };
}

/** A call about to be made (the model's id for display, the index for identity). */
export function toolCallStarted(call: EventCall, childRunId?: string): RunEventInput {
  const data = { toolCallId: call.id, index: call.index, name: call.name, arguments: call.arguments ?? null };
  return { type: 'tool-call-started', data: childRunId === undefined ? data : { ...data, childRunId } };
}

/** A call's outcome. */
export function toolResult(
  call: EventCall,
  outcome: { ok: boolean; status: number | null; result: string; code: string | null },
  durationMs: number,
): RunEventInput {
  return {
    type: 'tool-result',
    data: { toolCallId: call.id, index: call.index, name: call.name, ...outcome, durationMs },
  };
}

/** A person is asked about a call. */
export function approvalRequested(
  call: EventCall,
  approval: ApprovalView,
  request: PreparedRequestView,
): RunEventInput {
  return { type: 'approval-requested', data: { toolCallId: call.id, index: call.index, approval, request } };
}

/** A person answered an approval (the run becomes Running again). */
export function approvalAnswered(record: ApprovalRecord, answer: ApprovalAnswer): RunEventInput {
  return {
    type: 'approval-answered',
    data: {
      approvalId: record.id,
      toolCallId: record.toolCallId,
      index: record.callIndex,
      decision: answer.decision,
      reason: record.reason,
      by: { keyId: answer.by.keyId, keyName: answer.by.keyName },
      at: record.answeredAt,
    },
  };
}

/** The run waits for a person about these calls (it becomes PendingApproval). */
export function runWaiting(toolCallIds: string[]): RunEventInput {
  return { type: 'run-waiting', data: { toolCallIds } };
}

/** The answer of turn `step` does not match the interaction's result schema: `errors` are sent to the model. */
export function resultInvalid(step: number, errors: string[]): RunEventInput {
  return { type: 'result-invalid', data: { step, errors } };
}

/** A conversation's reply is out; it waits for a message until `idleUntil` (it becomes WaitingForInput). */
export function inputRequested(step: number, idleUntil: Date, result: string, structured = false): RunEventInput {
  const data = { step, idleUntil: idleUntil.toISOString(), result };
  return { type: 'input-requested', data: structured ? { ...data, structured } : data };
}

/** The next message of a conversation, from the key that sent it (it becomes Running). */
export function userMessage(text: string, by: { keyId: string; keyName: string }): RunEventInput {
  return { type: 'user-message', data: { text, by: { keyId: by.keyId, keyName: by.keyName } } };
}

/** What the model is sent at turn `step` leaves out the oldest turns or cuts tool results. */
export function historyTrimmed(step: number, turnsLeftOut: number, toolResultsCut: number): RunEventInput {
  return { type: 'history-trimmed', data: { step, turnsLeftOut, toolResultsCut } };
}

/** A conversation ended: no message came before its idle limit (it becomes Completed). */
export function conversationEnded(): RunEventInput {
  return { type: 'conversation-ended', data: { reason: 'idle' } };
}

/** The run's final answer (it becomes Completed); `structured`: the JSON text of the result object. */
export function runCompleted(result: string, scripted: boolean, structured = false): RunEventInput {
  return { type: 'run-completed', data: structured ? { result, scripted, structured } : { result, scripted } };
}

/** The run failed with a registry error (it becomes Failed). */
export function runFailed(error: { code: string; message: string }): RunEventInput {
  return { type: 'run-failed', data: { code: error.code, message: error.message } };
}

/** The run was cancelled (it becomes Cancelled). */
export function runCancelled(): RunEventInput {
  return { type: 'run-cancelled', data: {} };
}

/** The status change the last of `events` implies, if any: the journal writes it with them. */
export function statusChange(events: readonly RunEventInput[]): RunStatusChange | undefined {
  const last = events[events.length - 1];
  switch (last?.type) {
    case 'run-completed':
      return { status: 'Completed', result: last.data.result, structured: last.data.structured === true };
    case 'run-failed':
      return { status: 'Failed', error: last.data };
    case 'run-cancelled':
      return { status: 'Cancelled' };
    case 'run-waiting':
      return { status: 'PendingApproval' };
    case 'input-requested':
      return { status: 'WaitingForInput', result: last.data.result, structured: last.data.structured === true };
    case 'user-message':
      return { status: 'Running' };
    case 'conversation-ended':
      return { status: 'Completed' };
    case 'approval-answered':
      return { status: 'Running' };
    default:
      return undefined;
  }
}
