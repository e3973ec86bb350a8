import { randomUUID } from 'node:crypto';
import { isMtError, type MtError } from '@maitento/errors';
import { isPreparedRequest, type ToolCallInput, type ToolCallResult, toolResultText } from '@maitento/gateway';
import { didYouMean, type InteractionTool } from '@maitento/lang';
import { type ApprovalRecord, insertApproval, runApprovals } from '@maitento/store';
import { approvalNow, approvedCallUse } from '../approvals/acting.js';
import { engineErrors } from '../errors.js';
import { approvalRequested, toolCallStarted, toolResult } from '../journal/events.js';
import { approvalView } from '../runs/views.js';
import type { RunContext } from './context.js';
import type { Turn, TurnCall } from './history.js';
import { tracedRun } from '../telemetry/index.js';
import { subAgentCall, subAgentOf } from './sub-agents.js';
import {
  actingCheck,
  actingRefusal,
  callInput,
  directRefusalResult,
  type LocalResult,
  runBindingsFor,
  shownArguments,
} from './tool-input.js';

/**
 * What became of one call: done (result stored), waiting for a person, waiting on the child run it started (a
 * task handed to an agent), or the run must fail.
 */
export type CallOutcome = 'done' | 'waiting' | 'child' | { fail: MtError };

function localError(error: MtError): LocalResult {
  return { ok: false, code: error.code, error: error.message };
}

async function storeResult(
  ctx: RunContext,
  call: TurnCall,
  result: ToolCallResult | LocalResult,
  durationMs: number,
): Promise<void> {
  const outcome = {
    ok: result.ok,
    status: 'status' in result ? (result.status ?? null) : null,
    result: toolResultText(result),
    code: result.code ?? null,
  };
  await ctx.journal.append([toolResult(call, outcome, durationMs)]);
}

/** A call's identity: run, model turn and index within the turn; its upstream Idempotency-Key derives from it. */
export function callIdentity(ctx: RunContext, step: number, index: number): string {
  return `${ctx.run.id}:${step}:${index}`;
}

/** Marks the call started; resolves with the cache epoch that write read in its own statement. */
async function started(ctx: RunContext, turn: Turn, call: TurnCall): Promise<bigint | undefined> {
  const written = await ctx.journal.append([toolCallStarted(call)]);
  turn.started.add(call.index);
  return written === false ? undefined : written.epoch;
}

/**
 * Marks the call started (unless its turn's write did, just before: `epoch` is what that write read) and brings the
 * store cache up to date for its reads: with the cache epoch that the write of `tool-call-started` read in its own
 * statement (one round trip for both), else with a sync of its own (a resumed call).
 */
async function startAndSync(ctx: RunContext, turn: Turn, call: TurnCall, options: MakeOptions): Promise<void> {
  // Started by an earlier pickup: no write of this execution read the epoch for it.
  if (options.resumed) return ctx.reads.sync();
  const epoch = turn.started.has(call.index) ? options.epoch : await started(ctx, turn, call);
  if (epoch !== undefined) ctx.reads.observe(epoch);
  else await ctx.reads.sync();
}

/** How a call is made: with the approval it needs, and whether it resumes a call an earlier pickup started. */
interface MakeOptions {
  approved?: ApprovalRecord;
  resumed: boolean;
  /** The cache epoch read by the write that marked the call started with its turn's model response, if it did. */
  epoch?: bigint;
}

// Makes the call through the gateway; an approved one only through `callApproved` (same hash, checked at once).
async function makeCall(
  ctx: RunContext,
  turn: Turn,
  call: TurnCall,
  tool: InteractionTool,
  options: MakeOptions,
): Promise<void> {
  // The reads come from the cache once it saw the cache epoch read by the write of tool-call-started (a disable
  // or rotation answered before that write is seen).
  await startAndSync(ctx, turn, call, options);
  const span = ctx.telemetry?.tool(tracedRun(ctx), tool, call.id, options.approved?.id);
  // A call made after a wait (approved, or resumed) is checked once, right before sending, by the checks of the
  // moment of acting (fresh reads); one made at once here, from the synced cache (versions, the tree's key). The
  // secret is read once, into the input.
  const acting = options.approved !== undefined || options.resumed;
  const [refused, input] = await Promise.all([
    acting ? undefined : directRefusalResult(ctx, tool),
    callInput(ctx, tool, call.arguments, callIdentity(ctx, turn.step, call.index), ctx.signal),
  ]);
  if (span !== undefined) input.onSend = span.sending;
  const begin = performance.now();
  const elapsed = () => Math.round(performance.now() - begin);
  if (refused) {
    span?.end(refused, call.arguments);
    ctx.metrics?.toolCall(tool.tool.name, 'refused', (performance.now() - begin) / 1000);
    return storeResult(ctx, call, refused, elapsed());
  }
  let result: ToolCallResult | LocalResult;
  let stopped: MtError | undefined;
  if (options.approved !== undefined) {
    const approval = options.approved;
    // A retry of a started call may use its approval again, with the same idempotency key.
    const use = approvedCallUse(await actingCheck(ctx, tool), approval, {
      again: options.resumed,
      used: () => engineErrors.create('api:approvals:already-used', { id: approval.id, tool: tool.tool.name }),
    });
    result = await ctx.outside(ctx.gateway.callApproved(input, use));
  } else {
    // A call resumed after a crash (its run waited for a worker) is checked again like an approved one.
    stopped = options.resumed ? await actingRefusal(ctx, tool) : undefined;
    result = stopped !== undefined ? localError(stopped) : await ctx.outside(ctx.gateway.call(input));
  }
  span?.end(result, call.arguments);
  const outcome = stopped !== undefined ? 'refused' : result.ok ? 'ok' : 'error';
  ctx.metrics?.toolCall(tool.tool.name, outcome, (performance.now() - begin) / 1000);
  if (ctx.signal.aborted) throw ctx.signal.reason;
  await storeResult(ctx, call, result, elapsed());
}

// Asks for a person's approval: prepares the call (a call that cannot be made is answered at once).
async function requestApproval(
  ctx: RunContext,
  turn: Turn,
  call: TurnCall,
  tool: InteractionTool,
): Promise<CallOutcome> {
  const begin = performance.now();
  await ctx.reads.sync();
  const refused = await directRefusalResult(ctx, tool);
  if (refused) {
    await storeResult(ctx, call, refused, 0);
    return 'done';
  }
  const input: ToolCallInput = await callInput(
    ctx,
    tool,
    call.arguments,
    callIdentity(ctx, turn.step, call.index),
    ctx.signal,
  );
  const prepared = await ctx.gateway.prepare(input);
  if (!isPreparedRequest(prepared)) {
    await storeResult(ctx, call, prepared, Math.round(performance.now() - begin));
    return 'done';
  }
  const ttl = ctx.approvalTtlMs;
  await ctx.db.transaction(async (tx) => {
    const record = await insertApproval(tx, {
      id: randomUUID(),
      namespace: ctx.run.namespace,
      runId: ctx.run.id,
      toolCallId: call.id,
      step: turn.step,
      callIndex: call.index,
      functionName: tool.tool.name,
      agentName: ctx.pinned.agentTools.agentName,
      argumentsJson: shownArguments(call.arguments, runBindingsFor(ctx, tool)),
      requestHash: prepared.hash,
      ttlSeconds: ttl === undefined ? undefined : ttl / 1000,
      // The pinned tool version's policy and the tree's key: who may answer is decided from the approval alone.
      policy: tool.tool.approval ?? null,
      startedByKeyId: ctx.run.startedByKeyId,
    });
    await ctx.journal.append([approvalRequested(call, approvalView(record), prepared.view)], undefined, tx);
  });
  return 'waiting';
}

/** The key of a call's approval in {@link approvalsByCall}: its turn and index. */
export function approvalKey(step: number, index: number): string {
  return `${step}:${index}`;
}

/**
 * Handles one call of a turn that has no stored result yet. `startedHere` holds the identities this execution
 * marked started (with the cache epoch its turn's write read, when that write marked it): any other started call was
 * begun by a worker that stopped before storing its result.
 */
export async function handleCall(
  ctx: RunContext,
  turn: Turn,
  call: TurnCall,
  approvals: Map<string, ApprovalRecord>,
  startedHere: Map<string, bigint | undefined>,
): Promise<CallOutcome> {
  const tools = ctx.pinned.agentTools.tools;
  const tool = tools.find((t) => t.definition.name === call.name);
  const agent = tool === undefined ? subAgentOf(ctx, call) : undefined;
  if (agent !== undefined) return subAgentCall(ctx, turn, call, agent);
  try {
    if (tool === undefined) {
      const names = [...tools, ...ctx.pinned.agentTools.subAgents].map((t) => t.definition.name);
      const guess = didYouMean(call.name, names);
      const error = engineErrors.create('api:runs:unknown-tool', {
        name: call.name,
        suggestion: guess === undefined ? '' : ` (did you mean ${guess}?)`,
        known: names.join(', ') || '(none)',
      });
      await storeResult(ctx, call, localError(error), 0);
      return 'done';
    }
    const identity = callIdentity(ctx, turn.step, call.index);
    const resumed = turn.started.has(call.index) && !startedHere.has(identity);
    const epoch = startedHere.get(identity);
    if (!startedHere.has(identity)) startedHere.set(identity, undefined);
    // An MCP tools/call carries no idempotency key: one whose outcome was lost is never sent again.
    if (resumed && tool.connector.mcp !== undefined) {
      const error = engineErrors.create('api:runs:call-outcome-unknown', { tool: tool.tool.name });
      await storeResult(ctx, call, localError(error), 0);
      return 'done';
    }
    if (!tool.tool.requiresApproval) {
      await makeCall(ctx, turn, call, tool, { resumed, epoch });
      return 'done';
    }
    if (!ctx.run.interactive) {
      const error = engineErrors.create('api:approvals:no-one-to-ask', { tool: tool.tool.name });
      await storeResult(ctx, call, localError(error), 0);
      return 'done';
    }
    const approval = approvals.get(approvalKey(turn.step, call.index));
    if (approval === undefined) return await requestApproval(ctx, turn, call, tool);
    const now = approvalNow(approval);
    if (now === 'waiting') return 'waiting';
    if (now === 'approved') {
      if (!resumed) ctx.telemetry?.approvalEnded(tracedRun(ctx), approval, 'approved');
      await makeCall(ctx, turn, call, tool, { approved: approval, resumed });
      return 'done';
    }
    if (now === 'rejected') {
      ctx.telemetry?.approvalEnded(tracedRun(ctx), approval, 'rejected');
      const error = engineErrors.create('api:approvals:rejected', {
        tool: tool.tool.name,
        reason: approval.reason ?? '(none given)',
      });
      await storeResult(ctx, call, localError(error), 0);
      return 'done';
    }
    ctx.telemetry?.approvalEnded(tracedRun(ctx), approval, 'expired');
    return {
      fail: engineErrors.create('api:approvals:expired', { id: approval.id, expiresAt: approval.expiresAt ?? '' }),
    };
  } catch (error) {
    // A secret that does not open (changed, moved, or under a master key this worker lacks) fails the run loudly,
    // with nothing sent: the model cannot fix it, an operator must. The message names the secret's id only.
    if (!isMtError(error) || !error.code.startsWith('api:secrets:')) throw error;
    if (turn.started.has(call.index)) await storeResult(ctx, call, localError(error), 0);
    return { fail: error };
  }
}

/** Whether any of `calls` is of a tool that asks a person in this run (else its approvals need no read). */
export function needsApprovals(ctx: RunContext, calls: TurnCall[]): boolean {
  if (!ctx.run.interactive) return false;
  const tools = ctx.pinned.agentTools.tools;
  return calls.some((call) => tools.find((t) => t.definition.name === call.name)?.tool.requiresApproval === true);
}

/**
 * The run's approvals by call identity within the run (turn and index, {@link approvalKey}); an approval stored
 * before indexes were (before schema 9) is keyed by its turn and the first call of that turn with its id.
 */
export async function approvalsByCall(ctx: RunContext, turn: Turn): Promise<Map<string, ApprovalRecord>> {
  const byCall = new Map<string, ApprovalRecord>();
  for (const approval of await runApprovals(ctx.db, ctx.run.id)) {
    if (approval.step === null) continue;
    let index = approval.callIndex;
    if (index === null && approval.step === turn.step) {
      index = turn.calls.findIndex((call) => call.id === approval.toolCallId);
    }
    if (index !== null && index >= 0) byCall.set(approvalKey(approval.step, index), approval);
  }
  return byCall;
}
