import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import {
  appendRunEvents,
  cancelRequested,
  claimRun,
  expireApprovals,
  listRunEvents,
  orphanedRuns,
  type RunEventRecord,
  releaseLease,
  renewLeases,
} from '@maitento/store';
import { engineErrors } from '../errors.js';
import { type EngineDeps, LeaseLost, type RunContext } from '../loop/context.js';
import { advanceRun, cancelled } from '../loop/run-loop.js';
import type { PinnedLoader, PinnedSet } from '../runs/pinned.js';
import type { EngineLogger } from '../internal/logger.js';
import type { RunQueue } from './queue.js';

/** How a worker claims and recovers runs. */
export interface WorkerSettings {
  concurrency: number;
  /** How long a claim holds without renewal; a killed worker's runs are taken over after it (plus a sweep). */
  leaseSeconds: number;
}

class Stopping extends Error {}
class Cancelling extends Error {}

/**
 * Executes queued runs: claims each with a lease on `mt_runs` (renewed every third of it), polls for
 * cancels every 250 ms while runs are in flight, and sweeps for runs whose lease ran out and for
 * approvals past their expiry.
 */
export class RunWorker {
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  readonly #active = new Map<string, { controller: AbortController; cancelled: boolean }>();
  readonly #timers: NodeJS.Timeout[] = [];
  /** Runs in flight now waiting on a call outside the engine (a model, a tool). */
  #outside = 0;
  #stopping = false;

  constructor(
    private readonly deps: EngineDeps,
    private readonly loader: PinnedLoader,
    private readonly queue: RunQueue,
    private readonly settings: WorkerSettings,
    private readonly log: EngineLogger,
  ) {}

  /** Starts taking jobs and the timers. */
  async start(): Promise<void> {
    await this.queue.work(
      this.settings.concurrency,
      (runId) => this.execute(runId),
      () => this.#active.size - this.#outside,
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
    const lease = this.settings.leaseSeconds;
    every((lease * 1000) / 3, async () => {
      if (this.#active.size > 0) await renewLeases(this.deps.db, this.owner, lease);
    });
    every(250, () => this.pollCancels());
    every(Math.max(1000, (lease * 1000) / 2), () => this.sweep());
  }

  async pollCancels(): Promise<void> {
    if (this.#active.size === 0) return;
    for (const id of await cancelRequested(this.deps.db, [...this.#active.keys()])) {
      const entry = this.#active.get(id);
      if (entry && !entry.cancelled) {
        entry.cancelled = true;
        entry.controller.abort(new Cancelling('cancelled'));
      }
    }
  }

  /** Re-queues runs no live worker holds and fails runs whose approval expired. */
  async sweep(): Promise<void> {
    const db = this.deps.db;
    for (const approval of await expireApprovals(db)) {
      if (approval.runId === null) continue;
      const error = engineErrors.create('api:approvals:expired', {
        id: approval.id,
        expiresAt: approval.expiresAt ?? '',
      });
      await db.transaction((tx) =>
        appendRunEvents(
          tx,
          approval.runId!,
          { statuses: ['PendingApproval', 'Running'] },
          [{ type: 'run-failed', data: { code: error.code, message: error.message } }],
          { status: 'Failed', error: { code: error.code, message: error.message }, releaseLease: true },
        ),
      );
    }
    for (const id of await orphanedRuns(db, this.settings.leaseSeconds)) {
      if (!this.#active.has(id)) await this.queue.send(id);
    }
  }

  /** Executes one run job; never throws for the run's own failures. */
  async execute(runId: string): Promise<void> {
    if (this.#stopping) throw new Error('worker stopping');
    // A duplicate job (a cancel, an answer, the sweep) for a run this worker is executing: the claim below
    // would admit it (the lease is already this worker's), and two executions would race on one run. The
    // one in flight sees whatever the job was sent for: a cancel by polling, an answer by its fenced wait.
    if (this.#active.has(runId)) return;
    const { db } = this.deps;
    const entry = { controller: new AbortController(), cancelled: false };
    this.#active.set(runId, entry);
    let run: Awaited<ReturnType<typeof claimRun>>;
    try {
      run = await claimRun(db, runId, this.owner, this.settings.leaseSeconds);
    } finally {
      if (run === undefined) this.#active.delete(runId);
    }
    if (run === undefined) return;
    const owner = this.owner;
    const lease = this.settings.leaseSeconds;
    let pinned: PinnedSet;
    try {
      pinned = await this.loader.load(run.namespace, run.versions);
    } catch (error) {
      this.#active.delete(runId);
      await releaseLease(db, runId, owner).catch(() => {});
      throw error;
    }
    // The events as this worker knows them; undefined until read, and again when they may be stale.
    let known: RunEventRecord[] | undefined;
    const ctx: RunContext = {
      ...this.deps,
      run,
      pinned,
      signal: entry.controller.signal,
      outside: async (call) => {
        this.#outside++;
        try {
          return await call;
        } finally {
          this.#outside--;
        }
      },
      async write(events, change, expectSeq, tx) {
        // One statement, atomic on its own: no transaction of its own needed.
        const seq = await appendRunEvents(tx ?? db, runId, { leaseOwner: owner, expectSeq }, events, change);
        if (seq !== false) {
          const last = known?.[known.length - 1]?.seq ?? 0;
          if (known === undefined || tx !== undefined || seq !== last + events.length) known = undefined;
          else {
            const at = new Date().toISOString();
            known.push(
              ...events.map((event, index) => ({ seq: last + index + 1, type: event.type, data: event.data, at })),
            );
          }
          return true;
        }
        known = undefined;
        // The extra condition failed, not necessarily the lease: re-claiming tells which.
        if (expectSeq !== undefined && !tx && (await claimRun(db, runId, owner, lease)) !== undefined) return false;
        throw new LeaseLost(runId);
      },
      async events() {
        known ??= await listRunEvents(db, runId);
        return known;
      },
    };
    try {
      if (run.cancelRequested) await cancelled(ctx);
      else await advanceRun(ctx, () => entry.cancelled);
    } catch (error) {
      if (error instanceof LeaseLost) {
        this.log.warn({ runId }, 'run taken over by another worker or ended meanwhile');
      } else if (entry.cancelled) {
        await cancelled(ctx).catch(() => {});
      } else if (this.#stopping) {
        // Handed on: another worker (or this one, restarted) resumes from the stored steps.
        await releaseLease(db, runId, owner);
        await this.queue.send(runId).catch(() => {});
      } else {
        this.log.error({ err: error, runId }, 'run step failed unexpectedly; released for a retry');
        await releaseLease(db, runId, owner).catch(() => {});
        throw error;
      }
    } finally {
      this.#active.delete(runId);
    }
  }

  /** Stops: aborts the runs in flight (they are handed on, not failed) and stops the timers. */
  async stop(): Promise<void> {
    this.#stopping = true;
    for (const timer of this.#timers) clearInterval(timer);
    for (const entry of this.#active.values()) entry.controller.abort(new Stopping('worker stopping'));
    const deadline = Date.now() + 5000;
    while (this.#active.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  }
}
