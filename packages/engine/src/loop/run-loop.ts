import { isMtError, type MtError } from '@maitento/errors';
import { engineErrors } from '../errors.js';
import {
  historyTrimmed,
  modelResponse,
  runCancelled,
  runFailed,
  runWaiting,
  toolCallStarted,
} from '../journal/events.js';
import { cancelBelow, expirePending } from '../runs/cancel-tree.js';
import { tracedRun } from '../telemetry/index.js';
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
  const task = await runTask(ctx);
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
      // A call that handed a task to an agent waits on its child run, and the calls after it wait their turn: the
      // run stops, holding no worker, until the child's end queues it again (docs/runs.md, "Agents as tools").
      let child = false;
      for (const call of open) {
        if (isCancelled()) return cancelled(ctx);
        if (isStopping() && !last.started.has(call.index)) throw new HandedOn(ctx.run.id);
        const outcome = await handleCall(ctx, last, call, approvals, startedHere);
        if (outcome === 'waiting') waiting.push(call.id);
        else if (outcome === 'child') {
          child = true;
          break;
        } else if (outcome !== 'done') return fail(ctx, outcome.fail);
      }
      if (waiting.length === 0 && child) return 'waiting';
      if (waiting.length === 0) continue;
      // Wait only if nothing (an answer, a cancel) was stored since these events were read but this execution's own
      // appends (an approval answered at once is stored between them).
      const seq = ctx.journal.ownSeq;
      // The pause is an event of its own, stored with the status: a follower stops on it, never on a status it
      // might read before the run's other calls of the turn are made.
      if (await ctx.journal.append([runWaiting(waiting)], seq)) return 'waiting';
      continue;
    }
    if (turnsSinceInput(turns) >= ctx.maxSteps) {
      return fail(ctx, engineErrors.create('api:runs:too-many-steps', { max: ctx.maxSteps }));
    }
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
