import { randomUUID } from 'node:crypto';
import {
  type ApprovalRecord,
  type AuditContext,
  findRun,
  insertRun,
  listApprovalRecords,
  listRunSummaries,
  recordAudit,
  type RunRecord,
  runExists,
  runTree,
  treeApprovals,
  TERMINAL_RUN_STATUSES,
} from '@maitento/store';
import { bindIdempotentEffect, type IdempotentEffect, isUuid, nameSuggestion } from '@maitento/store';
import type { Interaction } from '@maitento/lang';
import { answerApproval, approvalOrThrow } from '../approvals/answer.js';
import { RUN_EVENTS_MAX_PAGE, RUN_EVENTS_PAGE, type RunningEngine, type WorkerHealth } from '../api/engine.js';
import type {
  ApprovalAnswer,
  ApprovalView,
  ListApprovalsQuery,
  ListRunsQuery,
  RunEvent,
  RunPage,
  RunView,
  RunViewer,
  StartRunInput,
} from '../api/types.js';
import { engineErrors } from '../errors.js';
import { runStarted, userMessage } from '../journal/events.js';
import { appendToRun, readEvents } from '../journal/journal.js';
import type { EngineDeps } from '../loop/context.js';
import type { RunQueue } from '../worker/queue.js';
import { cancelTree } from './cancel-tree.js';
import { checkInputs } from './inputs.js';
import { traceEndedElsewhere } from '../telemetry/index.js';
import type { PinnedLoader } from './pinned.js';
import { checkSecretInputs, visibleEvents, visibleInputs } from './secret-inputs.js';
import { approvalView, runSummary, runView } from './views.js';

function pendingOf(approvals: ApprovalRecord[]): ApprovalRecord | undefined {
  return approvals.find((a) => a.status === 'Pending');
}

/** The engine's API (declared by {@link RunningEngine}), on the store and the queue: what `createEngine` returns. */
export class RunService implements RunningEngine {
  constructor(
    private readonly deps: EngineDeps,
    private readonly loader: PinnedLoader,
    private readonly queue: RunQueue,
    /** This process's worker id, or null without a worker. */
    readonly workerId: string | null,
    /** Stops the worker (if any), the queue and the reads. */
    readonly close: () => Promise<void>,
    /** This process's worker: its slots, and its stop ahead of `close` (a shutdown). */
    private readonly worker?: {
      stop(drainMs?: number): Promise<void>;
      slots(): Pick<WorkerHealth, 'slots' | 'callAgesMs'>;
    },
  ) {}

  workerHealth(): WorkerHealth | null {
    return this.workerId === null ? null : { ...this.queue.health(), ...this.worker?.slots() };
  }

  async stopWorker(drainMs: number): Promise<void> {
    await this.worker?.stop(drainMs);
  }

  private async record(namespace: string, id: string, viewer?: RunViewer): Promise<RunRecord> {
    const run = isUuid(id) ? await findRun(this.deps.db, id, namespace) : undefined;
    // A runner key's own runs are those whose tree it started (docs/roles.md); another's is not found.
    if (run === undefined || (viewer?.role === 'runner' && run.startedByKeyId !== viewer.keyId)) {
      throw engineErrors.create('api:runs:not-found', { id });
    }
    return run;
  }

  private async view(run: RunRecord, viewer: RunViewer | undefined): Promise<RunView> {
    const shown = viewer === undefined ? run : { ...run, inputs: await this.visible(run, viewer) };
    if (run.status !== 'PendingApproval') return runView(shown);
    // Its own pending approval, or that of the child run it waits on (down the chain of children).
    return runView(shown, pendingOf(await treeApprovals(this.deps.db, run.id)));
  }

  // The interaction version a run was started on (pinned: kept, and cached by the loader).
  private interactionOf(namespace: string) {
    return async (ref: { name: string; version: number }) =>
      (await this.loader.version<Interaction>(namespace, { kind: 'interaction', ...ref }))?.resource;
  }

  // The run's inputs as `viewer` may see them (a secret input it may not use hidden).
  private async visible(run: RunRecord, viewer: RunViewer): Promise<Record<string, unknown>> {
    const interaction = await this.interactionOf(run.namespace)({
      name: run.interaction,
      version: run.interactionVersion,
    });
    return visibleInputs(this.deps.db, run.namespace, viewer, interaction, run.inputs);
  }

  async startRun(
    namespace: string,
    name: string,
    input: StartRunInput,
    startedBy?: { keyId: string },
    context?: { traceparent?: string },
  ): Promise<RunView> {
    // Before anything is read or stored: a run's inputs are stored twice (the row and run-started) and read often.
    const size = Buffer.byteLength(JSON.stringify(input.inputs ?? {}), 'utf8');
    if (size > this.deps.runInputMaxBytes) {
      throw engineErrors.create('api:runs:input-too-large', { size, max: this.deps.runInputMaxBytes });
    }
    const interaction = await this.loader.interaction(namespace, name, input.version);
    if (interaction === undefined) {
      throw engineErrors.create('api:interactions:not-found', {
        name,
        version: input.version === undefined ? '' : ` version ${input.version}`,
        suggestion: await nameSuggestion(this.deps.db, namespace, 'interaction', name),
      });
    }
    const versions = await this.loader.resolve(namespace, interaction);
    const pinned = await this.loader.load(namespace, versions);
    const inputs = checkInputs(pinned, input.inputs ?? {});
    // A secret the starting key may not use is refused before anything is stored (docs/security.md).
    if (startedBy !== undefined) {
      await checkSecretInputs(this.deps.db, namespace, startedBy.keyId, interaction.resource, inputs);
    }
    const id = randomUUID();
    const interactive = input.interactive ?? true;
    const trace = this.deps.telemetry?.allocate(context?.traceparent);
    // The run and its job in one transaction (pg-boss's `send` with the transaction as its `db`): they commit
    // together, so a run is never Running without a job, nor a job without its run. A COMMIT whose answer is lost is
    // settled by the store (committed: this start answers its run; decision 0101).
    const run = await this.deps.db.transaction(async (tx) => {
      const inserted = await insertRun(
        tx,
        {
          id,
          namespace,
          interaction: interaction.name,
          interactionVersion: interaction.version,
          versions,
          inputs,
          interactive,
          startedByKeyId: startedBy?.keyId,
          trace,
        },
        runStarted({
          interaction: { name: interaction.name, version: interaction.version },
          versions,
          inputs,
          interactive,
        }),
      );
      // The Idempotency-Key's record names this run in the same transaction (decision 0102).
      await bindIdempotentEffect(tx, { kind: 'run', id, status: 201 });
      // insertRun's statement notifies `runs` at the commit.
      await this.queue.send(id, tx, true);
      return inserted;
    });
    this.queue.sent();
    this.deps.metrics?.runStarted();
    return runView(run);
  }

  async getRun(namespace: string, id: string, viewer?: RunViewer): Promise<RunView> {
    return this.view(await this.record(namespace, id, viewer), viewer);
  }

  async listRuns(namespace: string, query: ListRunsQuery, viewer?: RunViewer): Promise<RunPage> {
    const limit = Math.min(Math.max(Math.floor(query.limit ?? 50), 1), 200);
    let after: { createdAt: string; id: string } | undefined;
    if (query.cursor !== undefined && query.cursor !== '') {
      try {
        after = JSON.parse(Buffer.from(query.cursor, 'base64url').toString('utf8'));
      } catch {
        after = undefined;
      }
      if (typeof after?.createdAt !== 'string' || typeof after.id !== 'string' || !isUuid(after.id)) {
        throw engineErrors.create('api:runs:invalid-cursor', { cursor: query.cursor });
      }
    }
    const records = await listRunSummaries(this.deps.db, namespace, {
      interaction: query.interaction,
      agent: query.agent,
      status: query.status,
      limit: limit + 1,
      after,
      ...(viewer?.role === 'runner' ? { startedByKeyId: viewer.keyId } : {}),
    });
    const page = records.slice(0, limit);
    const last = page[page.length - 1];
    return {
      runs: page.map(runSummary),
      nextCursor:
        records.length > limit && last
          ? Buffer.from(JSON.stringify({ createdAt: last.createdAt, id: last.id })).toString('base64url')
          : null,
    };
  }

  async listEvents(
    namespace: string,
    id: string,
    after = 0,
    limit = RUN_EVENTS_PAGE,
    viewer?: RunViewer,
  ): Promise<RunEvent[]> {
    // Only whether it is there: a stream reads a page at a time, and the run's inputs and result are not needed.
    if (viewer?.role === 'runner') await this.record(namespace, id, viewer);
    else if (!isUuid(id) || !(await runExists(this.deps.db, id, namespace))) {
      throw engineErrors.create('api:runs:not-found', { id });
    }
    const page = Math.min(Math.max(Math.floor(limit), 1), RUN_EVENTS_MAX_PAGE);
    const events = await readEvents(this.deps.db, id, after, page);
    if (viewer === undefined) return events;
    return visibleEvents(this.deps.db, namespace, viewer, this.interactionOf(namespace), events);
  }

  async sendMessage(
    namespace: string,
    id: string,
    text: string,
    by: { keyId: string; keyName: string },
    viewer?: RunViewer,
  ): Promise<RunView> {
    if (text.trim() === '') throw engineErrors.create('api:runs:message-empty');
    const run = await this.record(namespace, id, viewer);
    // The message and the run's job commit together, only while the run waits (one conditional append decides).
    const stored = await this.deps.db.transaction(async (tx) => {
      const seq = await appendToRun(tx, id, ['WaitingForInput'], [userMessage(text, by)]);
      if (seq === false) return false;
      await this.queue.send(id, tx);
      await bindIdempotentEffect(tx, { kind: 'run', id, status: 200 });
      return true;
    });
    if (!stored) {
      const now = await this.record(namespace, id);
      if ((TERMINAL_RUN_STATUSES as readonly string[]).includes(now.status)) {
        throw engineErrors.create('api:runs:already-ended', { id, status: now.status });
      }
      const why = run.status === 'Running' || now.status === 'Running' ? ': it is still answering' : '';
      throw engineErrors.create('api:runs:not-waiting-for-input', { id, status: now.status, why });
    }
    this.queue.sent();
    return this.getRun(namespace, id, viewer);
  }

  async cancelRun(namespace: string, id: string, viewer?: RunViewer, audit?: AuditContext): Promise<RunView> {
    const run = await this.record(namespace, id, viewer);
    // The runs a cancel ended here (waiting ones: no worker holds them) and the approvals it expired, for telemetry.
    const ended = new Map<string, ApprovalRecord[]>();
    // Cancelling a run cancels the child runs its calls started (agents as tools), down the chain, a child being
    // created at this moment included (cancel-tree.ts).
    const marked = await this.deps.db.transaction(async (tx) => {
      const done = await cancelTree(tx, namespace, id, this.queue, ended);
      if (done !== undefined) await bindIdempotentEffect(tx, { kind: 'run', id, status: 200 });
      if (done !== undefined && audit !== undefined) {
        await recordAudit(tx, {
          ...audit,
          namespace,
          action: 'run.cancelled',
          target: { kind: 'run', id },
          before: { status: run.status },
          after: { status: 'Cancelled' },
        });
      }
      return done;
    });
    if (marked === undefined) throw engineErrors.create('api:runs:already-ended', { id, status: run.status });
    this.queue.sent();
    // The waiting runs this cancel ended (a held one is counted by its worker when it stops).
    for (let i = 0; i < ended.size; i++) this.deps.metrics?.runEnded('Cancelled');
    const telemetry = this.deps.telemetry;
    if (telemetry !== undefined) {
      for (const [runId, expired] of ended) {
        await traceEndedElsewhere(telemetry, this.deps.db, this.loader, runId, expired, 'cancelled');
      }
    }
    return this.getRun(namespace, id, viewer);
  }

  async answerApproval(
    namespace: string,
    id: string,
    answer: ApprovalAnswer,
    effect?: IdempotentEffect,
  ): Promise<ApprovalView> {
    // The run's job is sent in the answer's transaction: an answered run is never left without one.
    const record = await answerApproval(
      this.deps.db,
      namespace,
      id,
      answer,
      (tx, runId) => this.queue.send(runId, tx),
      effect,
    );
    if (record.runId !== null) this.queue.sent();
    return approvalView(record);
  }

  async answerRunApproval(
    namespace: string,
    runId: string,
    approvalId: string | undefined,
    answer: ApprovalAnswer,
    viewer?: RunViewer,
  ): Promise<RunView> {
    const run = await this.record(namespace, runId);
    let id = approvalId;
    if (id === undefined || id === '') {
      // The approval pending when this request is handled: a late duplicate of an answer finds the one it
      // meant already answered (409 below), or, once the model has redrafted, the redraft (docs/runs.md).
      // Its own approvals and those of the child runs its calls started: a parent is answered for its child.
      const approvals = await treeApprovals(this.deps.db, runId);
      const pending = pendingOf(approvals);
      if (pending === undefined) {
        const latest = approvals.at(-1);
        if (latest !== undefined && (latest.status === 'Approved' || latest.status === 'Rejected')) {
          throw engineErrors.create('api:approvals:already-answered', { id: latest.id, status: latest.status });
        }
        throw engineErrors.create('api:runs:not-waiting', { id: runId, status: run.status });
      }
      id = pending.id;
    } else {
      const approval = await approvalOrThrow(this.deps.db, namespace, id);
      const tree = approval.runId === runId ? [runId] : await runTree(this.deps.db, runId);
      if (approval.runId === null || !tree.includes(approval.runId)) {
        throw engineErrors.create('api:approvals:not-pending-for-run', { id, runId });
      }
    }
    await this.answerApproval(namespace, id, answer, { kind: 'run', id: runId, status: 200 });
    return this.getRun(namespace, runId, viewer);
  }

  async getApproval(namespace: string, id: string, viewer?: RunViewer): Promise<ApprovalView> {
    const approval = await approvalOrThrow(this.deps.db, namespace, id);
    // A runner key reads only the approvals of its own runs and MCP calls (docs/roles.md).
    if (viewer?.role === 'runner' && approval.startedByKeyId !== viewer.keyId) {
      throw engineErrors.create('api:approvals:not-found', { id });
    }
    return approvalView(approval);
  }

  async listApprovals(namespace: string, query: ListApprovalsQuery, viewer?: RunViewer): Promise<ApprovalView[]> {
    const status = query.status === 'all' ? undefined : (query.status ?? 'Pending');
    if (query.runId !== undefined && !isUuid(query.runId)) return [];
    const records = await listApprovalRecords(this.deps.db, namespace, {
      status,
      runId: query.runId,
      limit: Math.min(Math.max(Math.floor(query.limit ?? 50), 1), 200),
      ...(viewer?.role === 'runner' ? { startedByKeyId: viewer.keyId } : {}),
    });
    return records.map(approvalView);
  }
}
