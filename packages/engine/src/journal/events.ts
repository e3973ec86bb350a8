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
  /**
   * What the turn cost in USD by the price table (`MT_MODEL_PRICES`), or null when it has no price for the model;
   * absent in responses stored before schema 30. The run's `cost_usd` sums it.
   */
  costUsd?: number | null;
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

/** What a run spent, as its budget counts it: tokens in + out, and cost in USD. */
export type BudgetSpent = { tokens: number; costUsd: number };

/** A run's budget as its events record it. */
export type BudgetLimit = { tokens: number | null; costUsd: number | null; onExceeded: 'wait' | 'fail' };

/**
 * What started a run that no request started: a schedule's tick, an inbound webhook's delivery, or (a chaining
 * trigger's, with `runId` and `status`) the end of another run, whose id is then the delivery's event id too.
 */
export type RunOrigin =
  | { kind: 'schedule'; name: string; version: number; tick: string }
  | {
      kind: 'trigger';
      name: string;
      version: number;
      eventId: string;
      runId?: string;
      status?: 'Completed' | 'Failed';
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
        /** A run that started itself: the schedule's tick or the webhook's delivery that started it. */
        origin?: RunOrigin;
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
        /**
         * The model-settable arguments a person set before approving (decision 0215): the call is made with them, and
         * the model's next turn is told; absent when nobody edited.
         */
        arguments?: unknown;
        /** The key that last edited them. */
        editedBy?: { keyId: string; keyName: string };
      };
    }
  /**
   * The run waits on these calls: for a person's approval (PendingApproval), or, with `authorizations`, for the
   * end users named to connect their accounts (PendingAuthorization) until `expiresAt` (none: no limit).
   */
  | {
      type: 'run-waiting';
      data: {
        toolCallIds: string[];
        authorizations?: { provider: string; endUser: string }[];
        expiresAt?: string;
      };
    }
  /**
   * A call's end user has no usable connection at its connector's auth provider: `url` is the connect link for
   * them (opened once, before `linkExpiresAt`); the run waits for the connection (docs/connections.md).
   */
  | { type: 'authorization-requested'; data: AuthorizationRequest }
  /** The end user connected: the run that waited for it is Running again. */
  | { type: 'authorization-completed'; data: { provider: string; endUser: string; connectionId: string } }
  | { type: 'result-invalid'; data: { step: number; errors: string[] } }
  /**
   * A conversation's reply (`result`, as `run-completed` has it) is out: the run waits for the next message until
   * `idleUntil` (WaitingForInput).
   */
  | { type: 'input-requested'; data: { step: number; idleUntil: string; result: string; structured?: true } }
  /** The next message of a conversation (the run becomes Running again). */
  | { type: 'user-message'; data: { text: string; by: { keyId: string; keyName: string } } }
  /**
   * The run reached its budget before a model turn: it waits for a person to extend it (PendingBudget); with
   * onExceeded = "fail" a `run-failed` (api:runs:budget-exceeded) follows instead.
   */
  | { type: 'budget-exceeded'; data: { spent: BudgetSpent; budget: BudgetLimit } }
  /** A person extended the budget of a run that waited for it (it becomes Running). */
  | { type: 'budget-extended'; data: { budget: BudgetLimit; by: { keyId: string; keyName: string } } }
  /**
   * A call was over a limit with onLimit "wait" (docs/limits.md): nothing was sent; the run waits (PendingLimit),
   * holding no worker, until `until`, when a worker's sweep makes it Running again and the call is made then.
   */
  | { type: 'limit-waiting'; data: LimitWait }
  /** The window a run waited for opened (it becomes Running; its call is tried again). */
  | { type: 'limit-wait-over'; data: Record<string, never> }
  /** Long conversation: the oldest turns were left out of what the model is sent (docs/runs.md). */
  | { type: 'history-trimmed'; data: { step: number; turnsLeftOut: number; toolResultsCut: number } }
  /** A conversation ended (it becomes Completed, its result the last reply): `idle` past its `maxIdle`. */
  | { type: 'conversation-ended'; data: { reason: 'idle' } }
  /** `structured`: the result is the JSON text of an object matching the interaction's `result.schema`. */
  | { type: 'run-completed'; data: { result: string; scripted: boolean; structured?: true } }
  | { type: 'run-failed'; data: { code: string; message: string } }
  | { type: 'run-cancelled'; data: Record<string, never> };

/** What a run waiting for an end user's authorisation shows (the `authorization-requested` event's data). */
export type AuthorizationRequest = {
  toolCallId: string;
  index: number;
  provider: string;
  endUser: string;
  scopes: string[];
  /** What the connection lacks: "not connected", "missing scopes: ...", "the provider refused the refresh token". */
  reason: string;
  /** The connect link for the end user. */
  url: string;
  linkExpiresAt: string;
};

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
      ...(record.editedArguments === null || record.status !== 'Approved'
        ? {}
        : { arguments: record.editedArguments, ...(record.editedBy === null ? {} : { editedBy: record.editedBy }) }),
    },
  };
}

/**
 * The run waits for a person about these calls (it becomes PendingApproval), or, with `authorizations`, for end users
 * to connect (it becomes PendingAuthorization) until `expiresAt`.
 */
export function runWaiting(
  toolCallIds: string[],
  authorizations?: { provider: string; endUser: string }[],
  expiresAt?: Date,
): RunEventInput {
  if (authorizations === undefined || authorizations.length === 0)
    return { type: 'run-waiting', data: { toolCallIds } };
  return {
    type: 'run-waiting',
    data: {
      toolCallIds,
      authorizations,
      ...(expiresAt === undefined ? {} : { expiresAt: expiresAt.toISOString() }),
    },
  };
}

/** A call waits for its end user to connect at its connector's auth provider, through `request.url`. */
export function authorizationRequested(request: AuthorizationRequest): RunEventInput {
  return { type: 'authorization-requested', data: request };
}

/** The end user the run waited for connected (it becomes Running). */
export function authorizationCompleted(provider: string, endUser: string, connectionId: string): RunEventInput {
  return { type: 'authorization-completed', data: { provider, endUser, connectionId } };
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

/** The run reached its budget; with `wait` it becomes PendingBudget. */
export function budgetExceeded(spent: BudgetSpent, budget: BudgetLimit): RunEventInput {
  return { type: 'budget-exceeded', data: { spent, budget } };
}

/** A person extended the budget (the run becomes Running). */
export function budgetExtended(budget: BudgetLimit, by: { keyId: string; keyName: string }): RunEventInput {
  return { type: 'budget-extended', data: { budget, by: { keyId: by.keyId, keyName: by.keyName } } };
}

/** What a run waits for while PendingLimit: the call, the limit (its policy name and in words) and until when. */
export type LimitWait = {
  toolCallId: string;
  index: number;
  tool: string;
  /** The policy's name, as the `RateLimit` fields name it: `tool-<name>`, `origin`, `tool-<name>-key`... */
  name: string;
  /** The limit in words: `2 calls per 3s`. */
  limit: string;
  /** When the window opens (ISO 8601, the worker's clock). */
  until: string;
};

/** A call waits for its limit's window to open (the run becomes PendingLimit). */
export function limitWaiting(wait: LimitWait): RunEventInput {
  return { type: 'limit-waiting', data: wait };
}

/** The window opened (the run becomes Running). */
export function limitWaitOver(): RunEventInput {
  return { type: 'limit-wait-over', data: {} };
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
      return { status: last.data.authorizations === undefined ? 'PendingApproval' : 'PendingAuthorization' };
    case 'authorization-completed':
      return { status: 'Running' };
    case 'budget-exceeded':
      return { status: 'PendingBudget' };
    case 'budget-extended':
      return { status: 'Running' };
    case 'limit-waiting':
      return { status: 'PendingLimit' };
    case 'limit-wait-over':
      return { status: 'Running' };
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
