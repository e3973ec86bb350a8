// Agents as tools: a call that hands a task to another agent starts a child run (a run like any other: its own
// events, job, approvals), and the call's result is the child's final answer. The child is found again by the
// call's identity (run, model turn, index in the turn: a unique index of mt_runs), so a parent resumed after a
// crash never starts a second child for the same call. The parent holds no worker while its child runs: the
// child's end queues the parent again, in the transaction that stores it (journal.ts).
import { randomUUID } from 'node:crypto';
import { findChildRun, insertRun, listRunEvents, type RunRecord, treeStartedBy } from '@maitento/store';
import { engineErrors } from '../errors.js';
import { runStarted, toolCallStarted, toolResult } from '../journal/events.js';
import { fillTask } from '../runs/inputs.js';
import type { RunContext } from './context.js';
import type { Turn, TurnCall } from './history.js';

/** What became of a call handing a task to an agent: its result stored, or its child run still going. */
export type SubAgentOutcome = 'done' | 'child';

/** The task of a run: a child's is the one its parent's call handed it, stored in its `run-started`. */
export async function runTask(ctx: RunContext): Promise<string> {
  if (ctx.run.parentRunId === null) return fillTask(ctx.pinned, ctx.run.inputs);
  const [first] = await ctx.journal.events();
  return first?.type === 'run-started' ? (first.data.parent?.task ?? '') : '';
}

/** The agent a call hands its task to, if the call names one of the run's agent's sub-agents. */
export function subAgentOf(ctx: RunContext, call: TurnCall): string | undefined {
  return ctx.pinned.agentTools.subAgents.find((s) => s.definition.name === call.name)?.agent;
}

async function store(
  ctx: RunContext,
  call: TurnCall,
  ok: boolean,
  result: string,
  code: string | null,
  durationMs = 0,
) {
  await ctx.journal.append([toolResult(call, { ok, status: null, result, code }, durationMs)]);
}

/** How long a child ran: from its start to its last change (its end, once it ended). */
function childDuration(child: RunRecord): number {
  return Math.max(0, Date.parse(child.updatedAt) - Date.parse(child.createdAt)) || 0;
}

/**
 * The child's last tool call, when it failed (a person's rejection is no failure): a child that answered right after
 * its own call failed did not do the task it was handed, whatever its words say (issue #45).
 */
async function lastCallFailed(
  ctx: RunContext,
  child: RunRecord,
): Promise<{ name: string; code: string | null } | undefined> {
  const events = await listRunEvents(ctx.db, child.id);
  const last = events.findLast((event) => event.type === 'tool-result');
  if (last === undefined || last.data.ok !== false || last.data.code === 'api:approvals:rejected') return undefined;
  const code = typeof last.data.code === 'string' ? last.data.code : null;
  const name = typeof last.data.name === 'string' ? last.data.name : 'a tool';
  return { name, code };
}

/**
 * The key on whose authority a run acts: the one that started its tree (a child stores its top run's). A child stored
 * without one (by a worker older than schema 19) reads its top run's: never "no key, no check" for a child.
 */
export function treeKeyId(ctx: Pick<RunContext, 'run' | 'db'>): Promise<string | null> {
  const run = ctx.run;
  if (run.startedByKeyId !== null || run.parentRunId === null) return Promise.resolve(run.startedByKeyId);
  // Read once per attempt (the top run's key never changes), not at each call.
  let read = topKeys.get(run);
  if (read === undefined) {
    read = treeStartedBy(ctx.db, run.id);
    read.catch(() => topKeys.delete(run));
    topKeys.set(run, read);
  }
  return read;
}

const topKeys = new WeakMap<RunRecord, Promise<string | null>>();

/** Hands the call's task to `agent` (once), or stores what its child run answered once it ended. */
export async function subAgentCall(
  ctx: RunContext,
  turn: Turn,
  call: TurnCall,
  agent: string,
): Promise<SubAgentOutcome> {
  const child = await findChildRun(ctx.db, ctx.run.id, turn.step, call.index);
  if (child === undefined) {
    const depth = ctx.run.depth + 1;
    if (depth > ctx.maxDepth) {
      const error = engineErrors.create('api:runs:too-deep', { agent, depth: ctx.run.depth + 1, max: ctx.maxDepth });
      await store(ctx, call, false, error.message, error.code);
      return 'done';
    }
    const args = call.arguments as { task?: unknown } | null;
    const task = typeof args?.task === 'string' ? args.task : JSON.stringify(call.arguments ?? {});
    const id = randomUUID();
    const run = ctx.run;
    const parent = { runId: run.id, step: turn.step, index: call.index, agent, task };
    // The call's start (naming its child), the child and its job commit together, fenced by this attempt's claim and
    // by the run's cancel (the start's append locks this run's row, as a cancel does: journal.ts, cancel-tree.ts).
    // The child acts on this run's authority: the key that started the tree, its namespace and inputs.
    await ctx.db.transaction(async (tx) => {
      await ctx.journal.append([toolCallStarted(call, id)], undefined, tx);
      await insertRun(
        tx,
        {
          id,
          namespace: run.namespace,
          interaction: run.interaction,
          interactionVersion: run.interactionVersion,
          versions: run.versions,
          inputs: run.inputs,
          interactive: run.interactive,
          startedByKeyId: (await treeKeyId(ctx)) ?? undefined,
          endUser: run.endUser,
          child: { parentRunId: run.id, step: turn.step, index: call.index, agent, depth },
        },
        runStarted({
          interaction: { name: run.interaction, version: run.interactionVersion },
          versions: run.versions,
          inputs: run.inputs,
          interactive: run.interactive,
          parent,
        }),
      );
      await ctx.queue.send(id, tx, true);
    });
    ctx.queue.sent();
    ctx.metrics?.runStarted();
    turn.started.add(call.index);
    return 'child';
  }
  switch (child.status) {
    case 'Completed': {
      // Its answer is the call's result either way (the model reads the words); the call failed when the child
      // answered right after its own call failed, so that neither the run view nor the console shows it succeeded.
      const failed = await lastCallFailed(ctx, child);
      const result = failed
        ? `[${agent} answered after its call of ${failed.name} failed: ${failed.code ?? 'no code'}] ${child.result ?? ''}`
        : (child.result ?? '');
      await store(ctx, call, failed === undefined, result, failed?.code ?? null, childDuration(child));
      return 'done';
    }
    case 'Failed':
    case 'Cancelled': {
      const how =
        child.status === 'Cancelled'
          ? 'was cancelled'
          : `failed: ${child.errorCode ?? ''} ${child.errorMessage ?? ''}`.trimEnd();
      const error = engineErrors.create('api:runs:sub-agent-ended', { agent, runId: child.id, how });
      await store(ctx, call, false, error.message, child.errorCode ?? error.code, childDuration(child));
      return 'done';
    }
    default:
      return 'child';
  }
}
