import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import {
  cancelRequested,
  claimRun,
  dueLimitWaits,
  expireApprovals,
  expiredAuthorizationWaits,
  FALLBACK_POLL_MS,
  idleConversations,
  nextSweepDueMs,
  type Queryable,
  SWEEP_MAX_MS,
  type RunEventRecord,
  type RunRecord,
  wakeTopics,
} from '@maitento/store';
import { failExpired } from '../approvals/answer.js';
import type { EngineLogger } from '../internal/logger.js';
import { engineErrors } from '../errors.js';
import { conversationEnded, limitWaitOver, runFailed } from '../journal/events.js';
import { AttemptJournal, appendToRun, CancelSeen, ClaimLost } from '../journal/journal.js';
import { type EngineDeps, HandedOn, type RunContext } from '../loop/context.js';
import { advanceRun, cancelled } from '../loop/run-loop.js';
import type { PinnedLoader, PinnedSet } from '../runs/pinned.js';
import { traceEndedElsewhere } from '../telemetry/index.js';
import type { RunJob, RunQueue, RunWakeups } from './queue.js';

/** How a worker executes runs. */
export interface WorkerSettings {
  concurrency: number;
  /** How long a stop waits for the tool calls in flight before it aborts them too (a call's own deadline). */
  drainMs: number;
}

/** How long a stop waits for the runs whose calls it aborted to be handed back (their job completed). */
export const HAND_BACK_MS = 5000;

/** Rounds of one sweep while something is due at once (each ends what was due); then it waits a fallback poll. */
const SWEEP_ROUNDS = 10;

class Stopping extends Error {}
class Cancelling extends Error {}

/** One run this worker executes: its cancel (aborts everything) and its stop (aborts the model call only). */
interface Held {
  runId: string;
  cancel: AbortController;
  stop: AbortController;
  cancelled: boolean;
  unsubscribe?: () => void;
  /** When each call it waits on outside the engine (a model, a tool) began (`performance.now()`). */
  outside: Set<{ since: number }>;
}

/**
 * Executes queued runs: pg-boss holds each run's job (heartbeats, one active job per run, retries); the worker
 * claims the run with the attempt's fencing token, learns of a cancel through the run's wake-up (or a slow poll
 * while wake-ups are not listening), and on stop lets the tool calls in flight finish before it hands runs on.
 */
export class RunWorker {
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  readonly #held = new Map<string, Held>();
  readonly #timers: NodeJS.Timeout[] = [];
  #sweepTimer: NodeJS.Timeout | undefined;
  #sweeping: Promise<void> | undefined;
  #sweepAgain = false;
  /** Runs in flight now waiting on a call outside the engine (a model, a tool). */
  #outside = 0;
  #stopping = false;
  #stopped: Promise<void> | undefined;

  constructor(
    private readonly deps: EngineDeps,
    private readonly loader: PinnedLoader,
    private readonly queue: RunQueue,
    private readonly settings: WorkerSettings,
    private readonly log: EngineLogger,
    private readonly wakeups?: RunWakeups,
  ) {}

  /** Starts taking jobs and the timers. */
  async start(): Promise<void> {
    await this.queue.work(
      this.settings.concurrency,
      (job) => this.execute(job),
      () => this.#held.size - this.#outside,
    );
    const every = (ms: number, fn: () => Promise<void>) => {
      let busy = false;
      const timer = setInterval(() => {
        if (busy) return;
        busy = true;
        fn()
          .catch((error) => this.log.error({ err: error }, 'run worker timer failed'))
          .finally(() => {
            busy = false;
          });
      }, ms);
      timer.unref();
      this.#timers.push(timer);
    };
    every(FALLBACK_POLL_MS, async () => {
      if (!this.wakeups?.listening) await this.pollCancels();
    });
    this.sweepSoon();
  }

  /**
   * Sweeps due approvals and idle conversations now, then again at the earliest due time the database tells (at most
   * SWEEP_MAX_MS later: what another process left waiting, or an approval made outside a run, is found so). A run of
   * this worker that stops waiting (an approval, a message) calls it too, so its due time is known at once.
   */
  sweepSoon(): void {
    if (this.#stopping) return;
    if (this.#sweeping !== undefined) {
      this.#sweepAgain = true;
      return;
    }
    clearTimeout(this.#sweepTimer);
    this.#sweepTimer = undefined;
    this.#sweeping = this.sweep()
      .catch((error) => {
        this.log.error({ err: error }, 'run worker timer failed');
        return FALLBACK_POLL_MS;
      })
      .then((waitMs) => {
        this.#sweeping = undefined;
        if (this.#stopping) return;
        if (this.#sweepAgain) {
          this.#sweepAgain = false;
          return this.sweepSoon();
        }
        this.#sweepTimer = setTimeout(() => this.sweepSoon(), waitMs);
        this.#sweepTimer.unref();
      });
  }

  /** One sweep; resolves with how long to wait for the next. */
  private async sweep(): Promise<number> {
    for (let round = 0; round < SWEEP_ROUNDS; round++) {
      const dueMs = await nextSweepDueMs(this.deps.db);
      if (dueMs === null) return SWEEP_MAX_MS;
      if (dueMs > 0) return Math.min(dueMs, SWEEP_MAX_MS);
      await this.expireApprovals();
      await this.endIdleConversations();
      await this.expireAuthorizationWaits();
      await this.endLimitWaits();
    }
    return FALLBACK_POLL_MS;
  }

  /** Ends the conversations that waited for a message past their `maxIdle` (Completed, their last reply the result). */
  async endIdleConversations(): Promise<void> {
    const db = this.deps.db;
    for (const id of await idleConversations(db)) {
      // Only while it still waits: a message stored meanwhile wins, and the run goes on.
      await appendToRun(db, id, ['WaitingForInput'], [conversationEnded()]);
    }
  }

  /** Fails the runs that waited for an end user to connect past their wait's `expiresAt` (MT_APPROVAL_TTL). */
  async expireAuthorizationWaits(): Promise<void> {
    const db = this.deps.db;
    const wake = (tx: Queryable, parentRunId: string) => this.queue.send(parentRunId, tx);
    for (const id of await expiredAuthorizationWaits(db)) {
      // Only while it still waits: a connection made meanwhile wins, and the run goes on.
      const error = engineErrors.create('api:connections:authorization-expired', { id });
      await db.transaction((tx) => appendToRun(tx, id, ['PendingAuthorization'], [runFailed(error)], wake));
    }
  }

  /**
   * Makes the runs whose limit's window opened (PendingLimit past their `until`) Running again and queues each, in one
   * transaction (docs/limits.md): the sweep is their one wake-up, in whichever worker comes first.
   */
  async endLimitWaits(): Promise<void> {
    const db = this.deps.db;
    let sent = false;
    for (const id of await dueLimitWaits(db)) {
      // Only while it still waits: a cancel stored meanwhile wins.
      const resumed = await db.transaction(async (tx) => {
        const seq = await appendToRun(tx, id, ['PendingLimit'], [limitWaitOver()]);
        if (seq !== false) await this.queue.send(id, tx);
        return seq !== false;
      });
      sent ||= resumed;
    }
    if (sent) this.queue.sent();
  }

  /** Reads the cancel flag of every run held and aborts those cancelled. */
  async pollCancels(): Promise<void> {
    if (this.#held.size === 0) return;
    const ids = [...new Set([...this.#held.values()].map((held) => held.runId))];
    const cancelledIds = new Set(await cancelRequested(this.deps.db, ids));
    for (const held of this.#held.values()) {
      if (cancelledIds.has(held.runId) && !held.cancelled) {
        held.cancelled = true;
        held.cancel.abort(new Cancelling('cancelled'));
      }
    }
  }

  /** Fails the runs whose approval expired. */
  async expireApprovals(): Promise<void> {
    const db = this.deps.db;
    const wake = (tx: Queryable, parentRunId: string) => this.queue.send(parentRunId, tx);
    for (const approval of await expireApprovals(db)) {
      const failed = await db.transaction((tx) => failExpired(tx, approval, wake));
      const telemetry = this.deps.telemetry;
      if (failed && telemetry !== undefined && approval.runId !== null) {
        await traceEndedElsewhere(telemetry, db, this.loader, approval.runId, [approval], 'api:approvals:expired');
      }
    }
  }

  /** Executes one attempt of a run's job; never throws for the run's own failures. */
  async execute(job: RunJob): Promise<void> {
    const { runId } = job;
    // The attempt's fencing token names this worker too (`host:pid:id/job/retry`), so an operator can tell who holds a run.
    const attempt = `${this.owner}/${job.attempt}`;
    if (this.#stopping) {
      // Fetched as the stop began: handed on untouched, without using one of the job's retries.
      await this.queue.send(runId);
      return;
    }
    const claimed = await claimRun(this.deps.db, runId, attempt);
    if (claimed === undefined) return;
    const held: Held = {
      runId,
      cancel: new AbortController(),
      stop: new AbortController(),
      cancelled: false,
      outside: new Set(),
    };
    this.#held.set(attempt, held);
    const onCancel = () => {
      if (held.cancelled) return;
      this.pollCancels().catch((error) => this.log.error({ err: error, runId }, 'reading a cancel failed'));
    };
    held.unsubscribe = this.wakeups?.on(wakeTopics.cancel(runId), onCancel);
    try {
      await this.advance(claimed.run, claimed.events, held, attempt);
    } finally {
      held.unsubscribe?.();
      this.#held.delete(attempt);
    }
  }

  private async advance(run: RunRecord, events: RunEventRecord[], held: Held, attempt: string) {
    const { db } = this.deps;
    const runId = run.id;
    const pinned: PinnedSet = await this.loader.load(run.namespace, run.versions, run.agent ?? undefined);
    const ctx: RunContext = {
      ...this.deps,
      run,
      pinned,
      signal: held.cancel.signal,
      modelSignal: AbortSignal.any([held.cancel.signal, held.stop.signal]),
      outside: async (call) => {
        this.#outside++;
        const entry = { since: performance.now() };
        held.outside.add(entry);
        try {
          return await call;
        } finally {
          held.outside.delete(entry);
          this.#outside--;
        }
      },
      journal: new AttemptJournal(
        db,
        runId,
        attempt,
        events,
        run.parentRunId === null ? undefined : { db, queue: this.queue },
      ),
      queue: this.queue,
    };
    try {
      if (run.cancelRequested) await cancelled(ctx);
      else {
        const stopped = await advanceRun(
          ctx,
          () => held.cancelled,
          () => this.#stopping,
        );
        // Waiting for an approval, a message or a limit's window: the sweep learns when it is due.
        if (stopped === 'waiting') this.sweepSoon();
      }
    } catch (error) {
      if (error instanceof ClaimLost) {
        this.log.warn({ runId }, 'run claimed by a later attempt or ended meanwhile');
      } else if (held.cancelled || error instanceof CancelSeen) {
        await cancelled(ctx).catch(() => {});
      } else if (error instanceof HandedOn || this.#stopping) {
        // Handed on: a new job, taken by another worker (or this one, restarted) once this attempt's job completes.
        await this.queue.send(runId);
      } else {
        this.log.error({ err: error, runId }, 'run step failed unexpectedly; its job is retried');
        throw error;
      }
    }
  }

  /** Its slots, and how long each run it holds has waited on its oldest call outside the engine (readiness). */
  slots(): { slots: number; callAgesMs: number[] } {
    const now = performance.now();
    const callAgesMs: number[] = [];
    for (const held of this.#held.values()) {
      let oldest: number | undefined;
      for (const call of held.outside) oldest = oldest === undefined ? call.since : Math.min(oldest, call.since);
      if (oldest !== undefined) callAgesMs.push(Math.round(now - oldest));
    }
    return { slots: this.settings.concurrency, callAgesMs };
  }

  /**
   * Stops: takes no more runs, aborts model calls, lets tool calls in flight finish (up to `drainMs`, default the
   * settings') and store their results, then hands the runs on; past the deadline it aborts the tool calls too, and
   * their runs are handed on with the call started in their journal (the next attempt sends it again with the same
   * Idempotency-Key). Called again (a shutdown began it, the close awaits it), it returns the same stop.
   */
  stop(drainMs = this.settings.drainMs): Promise<void> {
    this.#stopped ??= this.#stop(drainMs);
    return this.#stopped;
  }

  async #stop(drainMs: number): Promise<void> {
    this.#stopping = true;
    for (const timer of this.#timers) clearInterval(timer);
    clearTimeout(this.#sweepTimer);
    await this.#sweeping;
    for (const held of this.#held.values()) held.stop.abort(new Stopping('worker stopping'));
    if (await this.queue.drain(drainMs)) return;
    this.log.warn(
      { runs: this.#held.size, runIds: [...this.#held.values()].map((held) => held.runId) },
      'tool calls still in flight at the stop deadline: aborted, their runs handed back (replayed with the same Idempotency-Keys)',
    );
    for (const held of this.#held.values()) held.cancel.abort(new Stopping('worker stopping'));
    await this.queue.drain(HAND_BACK_MS);
  }
}
