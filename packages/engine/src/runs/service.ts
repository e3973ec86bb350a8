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
  type RunBudget,
  runExists,
  runTree,
  setRunBudget,
  treeApprovals,
  TERMINAL_RUN_STATUSES,
  treeSpend,
  watchRun,
} from '@maitento/store';
import {
  admitRunUnderQuotas,
  bindIdempotentEffect,
  type IdempotentEffect,
  isUuid,
  nameSuggestion,
  pendingAuthorizations,
  runsAwaitingConnection,
} from '@maitento/store';
import type { Interaction } from '@maitento/lang';
import { answerApproval, approvalOrThrow } from '../approvals/answer.js';
import { prepareEdit } from '../approvals/edit.js';
import {
  RUN_EVENTS_MAX_PAGE,
  RUN_EVENTS_PAGE,
  type RunningEngine,
  type StartContext,
  StartDeclined,
  type WorkerHealth,
} from '../api/engine.js';
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
} from '../api/types.js';
import { engineErrors } from '../errors.js';
import {
  type AuthorizationRequest,
  authorizationCompleted,
  budgetExtended,
  runFailed,
  runStarted,
  userMessage,
} from '../journal/events.js';
import { budgetReached, limitText, spentBy, spentText, treeBudgets } from '../loop/budget.js';
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

/** A change of a run's budget (`POST /v1/runs/{id}/budget`): each limit given replaces the old one. */
export interface BudgetChange {
  tokens?: number;
  costUsd?: number;
  onExceeded?: 'wait' | 'fail';
}

/**
 * A run's budget from the one it was started with, else its interaction's; null when neither names a limit. The
 * wire schemas bound each limit; a budget that names neither tokens nor cost is no budget.
 */
function runBudget(given: BudgetChange | undefined): RunBudget | null {
  if (given === undefined || (given.tokens === undefined && given.costUsd === undefined)) return null;
  return { tokens: given.tokens ?? null, costUsd: given.costUsd ?? null, onExceeded: given.onExceeded ?? 'wait' };
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
    if (run.status === 'PendingAuthorization') {
      const [first] = await pendingAuthorizations(this.deps.db, run.id);
      const view = runView(shown);
      if (first === undefined) return view;
      const { index: _index, ...shownRequest } = first as AuthorizationRequest;
      return { ...view, pendingAuthorization: shownRequest };
    }
    if (run.status === 'PendingLimit') {
      // Its last event is the `limit-waiting` it waits on (stored with the status).
      const [last] = await readEvents(this.deps.db, run.id, run.lastSeq - 1, 1);
      const view = runView(shown);
      if (last?.type !== 'limit-waiting') return view;
      const wait = last.data;
      return {
        ...view,
        waiting: {
          reason: 'rate-limit',
          until: wait.until,
          limit: wait.name,
          description: wait.limit,
          tool: wait.tool,
          toolCallId: wait.toolCallId,
        },
      };
    }
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
    context?: StartContext,
  ): Promise<RunView> {
    // Before anything is read or stored: a run's inputs are stored twice (the row and run-started) and read often.
    const size = Buffer.byteLength(JSON.stringify(input.inputs ?? {}), 'utf8');
    if (size > this.deps.runInputMaxBytes) {
      throw engineErrors.create('api:runs:input-too-large', { size, max: this.deps.runInputMaxBytes });
    }
    // A chain of runs started by triggers is as deep as agents handing tasks may be (docs/schedules-and-triggers.md).
    if (context?.depth !== undefined && context.depth > this.deps.maxDepth) {
      throw engineErrors.create('api:triggers:too-deep', { depth: context.depth, max: this.deps.maxDepth });
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
    // A key's limit on starting runs of the interaction (docs/limits.md), last before anything is stored: a start
    // refused by it stores nothing; one refused later (a quota) has counted. Schedules and triggers have no key.
    if (startedBy !== undefined && interaction.resource.limit !== undefined) {
      await this.deps.gateway.admitRunStart?.({
        namespace,
        interaction: interaction.name,
        limit: interaction.resource.limit,
        keyId: startedBy.keyId,
        endUser: input.endUser,
      });
    }
    const budget = runBudget(input.budget ?? interaction.resource.budget);
    const id = randomUUID();
    const interactive = input.interactive ?? true;
    const trace = this.deps.telemetry?.allocate(context?.traceparent);
    // The run and its job in one transaction (pg-boss's `send` with the transaction as its `db`): they commit
    // together, so a run is never Running without a job, nor a job without its run. A COMMIT whose answer is lost is
    // settled by the store (committed: this start answers its run; decision 0101).
    const run = await this.deps.db.transaction(async (tx) => {
      if (context?.claim !== undefined && !(await context.claim(tx, id))) throw new StartDeclined();
      // The namespace's quotas (docs/quotas.md): counted under their lock, so the run's row is counted by
      // the next start.
      await admitRunUnderQuotas(tx, namespace);
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
          budget,
          ...(input.endUser === undefined ? {} : { endUser: input.endUser }),
          ...(context?.origin === undefined ? {} : { origin: context.origin }),
          ...(context?.depth === undefined ? {} : { depth: context.depth }),
        },
        runStarted({
          interaction: { name: interaction.name, version: interaction.version },
          versions,
          inputs,
          interactive,
          ...(context?.origin === undefined ? {} : { origin: context.origin }),
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

  async connectionMade(namespace: string, provider: string, endUser: string, connectionId: string): Promise<string[]> {
    const resumed: string[] = [];
    for (const id of await runsAwaitingConnection(this.deps.db, namespace, provider, endUser)) {
      // Only while it still waits: a cancel or an expiry stored meanwhile wins.
      const stored = await this.deps.db.transaction(async (tx) => {
        const seq = await appendToRun(
          tx,
          id,
          ['PendingAuthorization'],
          [authorizationCompleted(provider, endUser, connectionId)],
        );
        if (seq === false) return false;
        await this.queue.send(id, tx);
        return true;
      });
      if (stored) resumed.push(id);
    }
    if (resumed.length > 0) this.queue.sent();
    return resumed;
  }

  async getRun(namespace: string, id: string, viewer?: RunViewer): Promise<RunView> {
    return this.view(await this.record(namespace, id, viewer), viewer);
  }

  async listRuns(namespace: string, query: ListRunsQuery & RunsListFilters, viewer?: RunViewer): Promise<RunPage> {
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
      ...(query.tool === undefined ? {} : { tool: query.tool }),
      status: query.status,
      limit: limit + 1,
      after,
      ...(query.since === undefined ? {} : { since: query.since }),
      ...(query.until === undefined ? {} : { until: query.until }),
      ...(query.idContains === undefined ? {} : { idContains: query.idContains }),
      ...(query.errorCode === undefined ? {} : { errorCode: query.errorCode }),
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

  async watchRun(id: string): Promise<void> {
    await watchRun(this.deps.db, id);
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

  async extendBudget(
    namespace: string,
    id: string,
    change: BudgetChange,
    by: { keyId: string; keyName: string },
    viewer?: RunViewer,
    audit?: AuditContext,
  ): Promise<RunView> {
    const run = await this.record(namespace, id, viewer);
    const notWaiting = (status: string) =>
      (TERMINAL_RUN_STATUSES as readonly string[]).includes(status)
        ? engineErrors.create('api:runs:already-ended', { id, status })
        : engineErrors.create('api:runs:not-waiting-for-budget', { id, status });
    if (run.status !== 'PendingBudget' || run.budget === null) throw notWaiting(run.status);
    const budget: RunBudget = {
      tokens: change.tokens ?? run.budget.tokens,
      costUsd: change.costUsd ?? run.budget.costUsd,
      onExceeded: change.onExceeded ?? run.budget.onExceeded,
    };
    // What the run and the runs below it spent (a budget covers its child runs).
    const spent = treeBudgets(await treeSpend(this.deps.db, id), id, spentBy(await readEvents(this.deps.db, id))).spent;
    // Letting it fail: the person says `onExceeded = "fail"` and gives no limit above what it spent. It fails now,
    // as its budget would have failed it (api:runs:budget-exceeded), in one transaction fenced on PendingBudget.
    if (budgetReached(spent, budget) && change.onExceeded === 'fail') {
      return this.failAtBudget(namespace, id, run.budget, budget, spent, viewer, audit);
    }
    // A budget the run already reached would stop it again before its next turn: refused, saying what it spent.
    if (budgetReached(spent, budget)) {
      throw engineErrors.create('api:runs:budget-too-small', { limit: limitText(budget), spent: spentText(spent) });
    }
    // The new budget, its event (the run Running again) and the run's job commit together, only while it waits.
    const stored = await this.deps.db.transaction(async (tx) => {
      if (!(await setRunBudget(tx, id, budget))) return false;
      const seq = await appendToRun(tx, id, ['PendingBudget'], [budgetExtended(budget, by)]);
      if (seq === false) return false;
      await this.queue.send(id, tx);
      await bindIdempotentEffect(tx, { kind: 'run', id, status: 200 });
      if (audit !== undefined) {
        await recordAudit(tx, {
          ...audit,
          namespace,
          action: 'run.budget-extended',
          target: { kind: 'run', id },
          before: { budget: run.budget, spent },
          after: { budget },
        });
      }
      return true;
    });
    if (!stored) throw notWaiting((await this.record(namespace, id)).status);
    this.queue.sent();
    return this.getRun(namespace, id, viewer);
  }

  /** A PendingBudget run a person let fail (see extendBudget): `run-failed` with api:runs:budget-exceeded. */
  private async failAtBudget(
    namespace: string,
    id: string,
    before: RunBudget,
    budget: RunBudget,
    spent: { tokens: number; costUsd: number },
    viewer?: RunViewer,
    audit?: AuditContext,
  ): Promise<RunView> {
    const error = engineErrors.create('api:runs:budget-exceeded', {
      limit: limitText(budget),
      spent: spentText(spent),
    });
    const stored = await this.deps.db.transaction(async (tx) => {
      if (!(await setRunBudget(tx, id, budget))) return false;
      const seq = await appendToRun(tx, id, ['PendingBudget'], [runFailed(error)]);
      if (seq === false) return false;
      await bindIdempotentEffect(tx, { kind: 'run', id, status: 200 });
      if (audit !== undefined) {
        await recordAudit(tx, {
          ...audit,
          namespace,
          action: 'run.budget-declined',
          target: { kind: 'run', id },
          before: { budget: before, spent },
          after: { status: 'Failed', code: error.code },
        });
      }
      return true;
    });
    if (!stored) {
      const now = (await this.record(namespace, id)).status;
      throw (TERMINAL_RUN_STATUSES as readonly string[]).includes(now)
        ? engineErrors.create('api:runs:already-ended', { id, status: now })
        : engineErrors.create('api:runs:not-waiting-for-budget', { id, status: now });
    }
    this.deps.metrics?.runEnded('Failed');
    const telemetry = this.deps.telemetry;
    if (telemetry !== undefined) await traceEndedElsewhere(telemetry, this.deps.db, this.loader, id, [], error.code);
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
      (approval, args) => prepareEdit(this.deps, this.loader, approval, args),
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
