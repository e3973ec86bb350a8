import type { AuditContext, Queryable } from '@maitento/store';
import type { RunOrigin } from '../journal/events.js';
import type {
  ApprovalAnswer,
  ApprovalView,
  ListApprovalsQuery,
  ListRunsQuery,
  RunsListFilters,
  RunEvent,
  RunPage,
  RunView,
  RunViewer,
  StartRunInput,
} from './types.js';

/**
 * Thrown by {@link Engine.startRun} when its `claim` answered false: another start owns what this one was for (a
 * schedule's tick another process took); nothing was stored.
 */
export class StartDeclined extends Error {
  constructor() {
    super('the start was declined by its claim');
    this.name = 'StartDeclined';
  }
}

/** What a start of a run may carry besides its inputs. */
export interface StartContext {
  /** The caller's W3C trace context: the run's trace continues it when OpenTelemetry is on. */
  traceparent?: string;
  /**
   * Runs first in the run's transaction with the new run's id: false stores nothing and throws {@link StartDeclined}
   * (a schedule records its tick here, so the tick and its run commit together or not at all).
   */
  claim?: (tx: Queryable, runId: string) => Promise<boolean>;
  /**
   * What started the run when no request did (a schedule's tick, a webhook's delivery, another run's end): kept in
   * its `run-started` and its row (the run's view shows it).
   */
  origin?: RunOrigin;
  /**
   * The depth the run starts at when not 0: a chaining trigger's run is one deeper than the run whose end started it,
   * counted as a child run is; past the engine's `maxDepth` (MT_RUN_MAX_DEPTH) the start is refused
   * (`api:triggers:too-deep`) before anything is stored.
   */
  depth?: number;
}

/** How many events {@link Engine.listEvents} answers when no `limit` is given. */
export const RUN_EVENTS_PAGE = 100;

/** The most events {@link Engine.listEvents} answers at once, whatever the `limit`. */
export const RUN_EVENTS_MAX_PAGE = 1000;

/**
 * What the server asks of the engine. Every method is scoped to a namespace (another namespace's run or
 * approval is `not-found`) and throws registry errors (`MtError`) for the caller's mistakes. A method that shows a
 * run's inputs takes the `viewer` (the request's key): a secret input whose secret it may not use is shown as
 * `{ "secret": true }` (docs/security.md). The server always passes it; without one (the engine's own callers) the
 * inputs are shown as stored.
 */
export interface Engine {
  /**
   * Checks the inputs (a secret `startedBy` may not use is 403 `api:runs:secret-forbidden`), pins every version,
   * stores the run and queues it; resolves with the new run.
   */
  startRun(
    namespace: string,
    interaction: string,
    input: StartRunInput,
    startedBy?: { keyId: string },
    context?: StartContext,
  ): Promise<RunView>;
  getRun(namespace: string, id: string, viewer?: RunViewer): Promise<RunView>;
  /** One page of runs as summaries: no inputs, the result cut short (the run's own {@link getRun} has all). */
  listRuns(namespace: string, query: ListRunsQuery & RunsListFilters, viewer?: RunViewer): Promise<RunPage>;
  /**
   * The stored steps with `seq > after` (default 0), in order: at most `limit` of them (default
   * {@link RUN_EVENTS_PAGE}, at most {@link RUN_EVENTS_MAX_PAGE}); read the next page after the last `seq`.
   */
  listEvents(namespace: string, id: string, after?: number, limit?: number, viewer?: RunViewer): Promise<RunEvent[]>;
  /**
   * Marks run `id` watched for the store's `RUN_WATCH_SECONDS`: until then every event appended to it wakes
   * `run:<id>` (an unwatched run's appends wake nobody). A stream calls it before it reads, and again every
   * `RUN_WATCH_RENEW_MS` while it is open.
   */
  watchRun(id: string): Promise<void>;
  /**
   * Sends the next message of a conversation waiting for one (WaitingForInput): stores it and queues the run; resolves
   * with the run (Running). Empty text is 422 `api:runs:message-empty`; a run that does not wait for a message is 409
   * `api:runs:not-waiting-for-input`, an ended one 409 `api:runs:already-ended`.
   */
  sendMessage(
    namespace: string,
    runId: string,
    text: string,
    by: { keyId: string; keyName: string },
    viewer?: RunViewer,
  ): Promise<RunView>;
  /**
   * Extends the budget of a run that waits for it (PendingBudget): each limit of `change` replaces the run's, the
   * run is Running again and queued, in one transaction (with `audit`, one `run.budget-extended` row). A run that
   * does not wait for it is 409 `api:runs:not-waiting-for-budget` (ended: `api:runs:already-ended`); a budget the
   * run already reached is 422 `api:runs:budget-too-small`, unless `change.onExceeded` is "fail": then the run is let
   * fail at once (`run-failed`, api:runs:budget-exceeded; audit `run.budget-declined`).
   */
  extendBudget(
    namespace: string,
    id: string,
    change: { tokens?: number; costUsd?: number; onExceeded?: 'wait' | 'fail' },
    by: { keyId: string; keyName: string },
    viewer?: RunViewer,
    audit?: AuditContext,
  ): Promise<RunView>;
  /** Cancels a run that has not ended (a terminal run answers 409 `api:runs:already-ended`). */
  /** Cancels a run and its tree; with `audit`, one `run.cancelled` row is written in the cancel's transaction. */
  cancelRun(namespace: string, id: string, viewer?: RunViewer, audit?: AuditContext): Promise<RunView>;
  /** Answers the run's pending approval (or the one named), once; resolves with the run. */
  answerRunApproval(
    namespace: string,
    runId: string,
    approvalId: string | undefined,
    answer: ApprovalAnswer,
    viewer?: RunViewer,
  ): Promise<RunView>;
  /** Answers an approval by its id, once (409 `api:approvals:already-answered` for the losers). */
  answerApproval(namespace: string, approvalId: string, answer: ApprovalAnswer): Promise<ApprovalView>;
  getApproval(namespace: string, id: string, viewer?: RunViewer): Promise<ApprovalView>;
  listApprovals(namespace: string, query: ListApprovalsQuery, viewer?: RunViewer): Promise<ApprovalView[]>;
  /**
   * Resumes the runs of `namespace` that wait (PendingAuthorization) for `endUser` to connect at `provider`, now that
   * connection `connectionId` is made: each gets `authorization-completed` and is queued. Resolves with their ids.
   */
  connectionMade(namespace: string, provider: string, endUser: string, connectionId: string): Promise<string[]>;
  /** Stops this process's workers (if any) and the queue; the database stays open. */
  close(): Promise<void>;
  /**
   * How this process's worker fares (readiness, `GET /health`): how long since its fetch loop last turned and how
   * late its held jobs' heartbeat is; null (or absent) without a worker.
   */
  workerHealth?(): WorkerHealth | null;
  /**
   * Begins this process's worker's stop now (a shutdown: docs/operations.md, "Shutdown"): it takes no more runs, aborts
   * model calls, lets the tool calls in flight finish for `drainMs`, then aborts them and hands their runs back (the
   * next attempt replays each call with its Idempotency-Key). Resolves when it has stopped; `close` awaits the same
   * stop. Absent, or nothing to do, without a worker.
   */
  stopWorker?(drainMs: number): Promise<void>;
}

/** See {@link Engine.workerHealth}. */
export interface WorkerHealth {
  /** Milliseconds since the worker's fetch loop last turned (it turns at least every 2 s while it works). */
  sinceTurnMs: number | null;
  /** While its heartbeat fails with jobs held: milliseconds since it last went through; else 0. */
  heartbeatLateMs: number;
  /** The runs it executes at most at once (`MT_WORKER_CONCURRENCY`). */
  slots?: number;
  /**
   * For each run it holds that waits on a call outside the engine (a model, a tool): milliseconds since the oldest such
   * call began. Every slot held by an old call means a frozen upstream holds the worker.
   */
  callAgesMs?: number[];
}

/** The engine as `createEngine` returns it: the server's {@link Engine}, plus its worker's id. */
export interface RunningEngine extends Engine {
  /** This process's worker id (for its log lines), or null without a worker. */
  readonly workerId: string | null;
}
