import { isMtError, type MtError } from '@maitento/errors';
import { getNamespaceQuotas, tokenQuotaRefusal, treeSpend } from '@maitento/store';
import { engineErrors } from '../errors.js';
import {
  budgetExceeded,
  historyTrimmed,
  type LimitWait,
  limitWaiting,
  modelResponse,
  runCancelled,
  runFailed,
  runWaiting,
  toolCallStarted,
} from '../journal/events.js';
import { cancelBelow, expirePending } from '../runs/cancel-tree.js';
import { tracedRun } from '../telemetry/index.js';
import { budgetReached, limitText, spentBy, spentText, treeBudgets } from './budget.js';
import { HandedOn, type RunContext } from './context.js';
import { readTurns, turnsSinceInput } from './history.js';
import { modelTurn } from './model-turn.js';
import { runTask } from './sub-agents.js';
import { finalAnswer } from './result-shape.js';
import { approvalsByCall, callIdentity, handleCall, needsApprovals } from './tool-calls.js';

/** Why a run's execution stopped in this worker. */
export type StopReason = 'ended' | 'waiting';

async function fail(ctx: RunContext, error: MtError): Promise<StopReason> {
  await ctx.journal.append([runFailed(error)]);
  ctx.telemetry?.runEnded(tracedRun(ctx), error.code);
  ctx.metrics?.runEnded('Failed');
  return 'ended';
}

/**
 * Stores the run's cancellation (its worker saw the cancel request between steps, or a call's start refused by it),
 * then expires its Pending approvals (one asked just before the cancel) and cancels the runs below it that have not
 * ended: once the run is Cancelled no child can be created under it, so the children read after that are all there are.
 */
export async function cancelled(ctx: RunContext): Promise<StopReason> {
  await ctx.journal.append([runCancelled()]);
  ctx.telemetry?.runEnded(tracedRun(ctx), 'cancelled');
  ctx.metrics?.runEnded('Cancelled');
  await ctx.db.transaction(async (tx) => {
    await expirePending(tx, ctx.run.id);
    await cancelBelow(tx, ctx.run.namespace, ctx.run.id, ctx.queue);
  });
  ctx.queue.sent();
  return 'ended';
}

/**
 * Executes a claimed run from its stored events until it ends or waits for a person: each pickup rebuilds
 * the conversation, finishes the last turn's calls, then asks the model for the next turn. While `isStopping()`,
 * it throws {@link HandedOn} before a call not yet started and before a model turn: a call already started
 * (marked with its turn's model response, or in flight) is finished and its result stored first.
 */
export async function advanceRun(
  ctx: RunContext,
  isCancelled: () => boolean,
  isStopping: () => boolean,
): Promise<StopReason> {
  // The namespace's quotas are read once an execution (docs/quotas.md): a namespace without one costs
  // nothing more per turn or call.
  const [task, quotas] = await Promise.all([runTask(ctx), getNamespaceQuotas(ctx.db, ctx.run.namespace)]);
  ctx.quotas = quotas;
  // Whether this run or a run above it has a budget: only then are the tree's figures read before each turn.
  let treeBudgeted = ctx.run.budget !== null || ctx.run.parentRunId !== null;
  // The calls this execution marked started (with the cache epoch read by the turn's write that marked one): any other
  // started call without a result was begun by a worker that stopped before storing its outcome.
  const startedHere = new Map<string, bigint | undefined>();
  for (;;) {
    if (isCancelled()) return cancelled(ctx);
    const events = await ctx.journal.events();
    const turns = readTurns(events);
    const last = turns[turns.length - 1];
    const open = last?.calls.filter((call) => !last.results.has(call.index)) ?? [];
    if (last && open.length > 0) {
      const approvals = needsApprovals(ctx, open) ? await approvalsByCall(ctx, last) : new Map();
      const waiting: string[] = [];
      const authorizations: { provider: string; endUser: string }[] = [];
      // A call that handed a task to an agent waits on its child run, and the calls after it wait their turn: the
      // run stops, holding no worker, until the child's end queues it again (docs/runs.md, "Agents as tools").
      let child = false;
      // A call over a "wait" limit whose window opens later than a worker waits: the run waits durably
      // (PendingLimit), holding no worker, and the calls after it wait their turn (docs/limits.md).
      let limited: LimitWait | undefined;
      for (const call of open) {
        if (isCancelled()) return cancelled(ctx);
        if (isStopping() && !last.started.has(call.index)) throw new HandedOn(ctx.run.id);
        const outcome = await handleCall(ctx, last, call, approvals, startedHere);
        if (outcome === 'waiting') waiting.push(call.id);
        else if (typeof outcome === 'object' && 'authorizing' in outcome) {
          waiting.push(call.id);
          authorizations.push(outcome.authorizing);
        } else if (outcome === 'child') {
          child = true;
          break;
        } else if (typeof outcome === 'object' && 'limited' in outcome) {
          limited = outcome.limited;
          break;
        } else if (typeof outcome === 'object' && 'fail' in outcome) return fail(ctx, outcome.fail);
      }
      if (waiting.length === 0 && child) return 'waiting';
      if (waiting.length === 0 && limited !== undefined) {
        // Unless something (a cancel) was stored since these events were read: a worker's sweep makes it Running
        // again at `until` and queues it (one wake-up, the sweep's, as for an approval's expiry).
        if (await ctx.journal.append([limitWaiting(limited)], ctx.journal.ownSeq)) return 'waiting';
        continue;
      }
      if (waiting.length === 0) continue;
      // Wait only if nothing (an answer, a cancel) was stored since these events were read but this execution's own
      // appends (an approval answered at once is stored between them).
      const seq = ctx.journal.ownSeq;
      // The pause is an event of its own, stored with the status: a follower stops on it, never on a status it
      // might read before the run's other calls of the turn are made.
      // Waiting for an end user to connect (PendingAuthorization) expires as an approval does (MT_APPROVAL_TTL).
      const expiresAt =
        authorizations.length > 0 && ctx.approvalTtlMs !== undefined
          ? new Date(Date.now() + ctx.approvalTtlMs)
          : undefined;
      if (await ctx.journal.append([runWaiting(waiting, authorizations, expiresAt)], seq)) return 'waiting';
      continue;
    }
    if (turnsSinceInput(turns) >= ctx.maxSteps) {
      return fail(ctx, engineErrors.create('api:runs:too-many-steps', { max: ctx.maxSteps }));
    }
    // Its budget (docs/runs.md "Usage and budgets"): once reached, no further model turn is asked for. A budget
    // covers the runs below (agents as tools): a run with one counts its children's turns, and a child stops once an
    // ancestor's budget is reached (the ancestor then stops by its own budget's choice).
    let spent = spentBy(events);
    const budget = ctx.run.budget;
    if (treeBudgeted) {
      const standing = treeBudgets(await treeSpend(ctx.db, ctx.run.id), ctx.run.id, spent);
      spent = standing.spent;
      // No budget above or here (budgets are set at a run's start, never added later): not read again.
      treeBudgeted = budget !== null || standing.ancestorsBudgeted;
      if (standing.ancestor !== undefined) {
        return fail(
          ctx,
          engineErrors.create('api:runs:ancestor-budget-exceeded', {
            run: standing.ancestor.id,
            limit: limitText(standing.ancestor.budget),
            spent: spentText(standing.ancestor.spent),
          }),
        );
      }
    }
    if (budgetReached(spent, budget)) {
      const exceeded = budgetExceeded(spent, budget);
      if (budget.onExceeded === 'fail') {
        const error = engineErrors.create('api:runs:budget-exceeded', {
          limit: limitText(budget),
          spent: spentText(spent),
        });
        await ctx.journal.append([exceeded, runFailed(error)]);
        ctx.telemetry?.runEnded(tracedRun(ctx), error.code);
        ctx.metrics?.runEnded('Failed');
        return 'ended';
      }
      // Waits (PendingBudget) unless something (a cancel) was stored since these events were read; a person's
      // extension (POST /v1/runs/{id}/budget) makes it Running and queues it again.
      if (await ctx.journal.append([exceeded], ctx.journal.ownSeq)) return 'waiting';
      continue;
    }
    // The namespace's tokens of the month (docs/quotas.md): once spent, no model turn starts and the run fails.
    const overQuota = await tokenQuotaRefusal(ctx.db, ctx.run.namespace, quotas);
    if (overQuota !== undefined) return fail(ctx, overQuota);
    if (isStopping()) throw new HandedOn(ctx.run.id);
    let turn: Awaited<ReturnType<typeof modelTurn>>;
    try {
      turn = await modelTurn(ctx, task, turns);
    } catch (error) {
      if (ctx.modelSignal.aborted) throw error;
      return fail(
        ctx,
        isMtError(error)
          ? error
          : engineErrors.create('api:models:invalid-response', {
              model: ctx.pinned.agent.resource.model,
              detail: String(error),
            }),
      );
    }
    const { trimmed, ...response } = turn;
    const event = modelResponse(turns.length + 1, response);
    // What of a long history the model was not sent is stored first: never trimmed silently (docs/runs.md).
    if (trimmed !== undefined) {
      await ctx.journal.append([historyTrimmed(turns.length + 1, trimmed.turnsLeftOut, trimmed.toolResultsCut)]);
    }
    if (response.toolCalls.length === 0) {
      const { events, retry } = finalAnswer(ctx, turns.length + 1, response, turns);
      await ctx.journal.append([event, ...events]);
      if (retry) continue;
      const ended = events.at(-1);
      if (ended?.type === 'run-completed') ctx.telemetry?.runEnded(tracedRun(ctx));
      else if (ended?.type === 'run-failed') ctx.telemetry?.runEnded(tracedRun(ctx), 'api:runs:result-invalid');
      if (ended?.type === 'run-completed') ctx.metrics?.runEnded('Completed');
      else if (ended?.type === 'run-failed') ctx.metrics?.runEnded('Failed');
      // A conversation's reply: the run waits for a message until its idle limit.
      return ended?.type === 'input-requested' ? 'waiting' : 'ended';
    }
    // The turn's first call, when it is made without asking anyone, is marked started in the same write: one
    // round trip before the call instead of two.
    const first = response.toolCalls[0]!;
    const direct = ctx.pinned.agentTools.tools.some(
      (t) => t.definition.name === first.name && !t.tool.requiresApproval,
    );
    if (!direct) {
      await ctx.journal.append([event]);
      continue;
    }
    const call = { ...first, index: 0 };
    const written = await ctx.journal.append([event, toolCallStarted(call)]);
    startedHere.set(callIdentity(ctx, turns.length + 1, 0), written === false ? undefined : written.epoch);
  }
}
