import { randomUUID } from 'node:crypto';
import { isMtError, type MtError } from '@maitento/errors';
import { isPreparedRequest, type ToolCallResult, toolResultText } from '@maitento/gateway';
import { didYouMean, type InteractionTool } from '@maitento/lang';
import { type ApprovalRecord, insertApproval, runApprovals } from '@maitento/store';
import { approvalView } from '../runs/views.js';
import { engineErrors } from '../errors.js';
import type { RunContext } from './context.js';
import type { Turn, TurnCall } from './history.js';
import {
  callInput,
  disabledResult,
  type LocalResult,
  requestHash,
  runBindingsFor,
  shownArguments,
} from './tool-input.js';

/** What became of one call: done (result stored), waiting for a person, or the run must fail. */
export type CallOutcome = 'done' | 'waiting' | { fail: MtError };

function localError(error: MtError): LocalResult {
  return { ok: false, code: error.code, error: error.message };
}

async function storeResult(
  ctx: RunContext,
  call: TurnCall,
  result: ToolCallResult | LocalResult,
  durationMs: number,
): Promise<void> {
  await ctx.write([
    {
      type: 'tool-result',
      data: {
        toolCallId: call.id,
        name: call.name,
        ok: result.ok,
        status: 'status' in result ? (result.status ?? null) : null,
        result: toolResultText(result),
        code: result.code ?? null,
        durationMs,
      },
    },
  ]);
}

async function started(ctx: RunContext, turn: Turn, call: TurnCall): Promise<void> {
  if (turn.started.has(call.id)) return;
  await ctx.write([
    { type: 'tool-call-started', data: { toolCallId: call.id, name: call.name, arguments: call.arguments ?? null } },
  ]);
  turn.started.add(call.id);
}

// Makes the call through the gateway; with `approved`, only if the request is still the one approved.
async function makeCall(
  ctx: RunContext,
  turn: Turn,
  call: TurnCall,
  tool: InteractionTool,
  approved?: { id: string; requestHash: string },
): Promise<void> {
  // The reads wait for the cache's sync (nothing while its lease holds; a disable or rotation answered before is
  // seen), then come from the cache; only the call itself must wait for tool-call-started.
  const reads = ctx.reads
    .sync()
    .then(() =>
      Promise.all([
        disabledResult(ctx, tool),
        callInput(ctx, tool, call.arguments, `${ctx.run.id}:${turn.step}:${call.id}`, ctx.signal),
      ]),
    );
  const [, [disabled, input]] = await Promise.all([started(ctx, turn, call), reads]);
  const begin = performance.now();
  const elapsed = () => Math.round(performance.now() - begin);
  if (disabled) return storeResult(ctx, call, disabled, elapsed());
  if (approved !== undefined) {
    input.approval = { id: approved.id };
    const prepared = await ctx.gateway.prepare(input);
    if (!isPreparedRequest(prepared)) return storeResult(ctx, call, prepared, elapsed());
    if (requestHash(prepared, input.credential) !== approved.requestHash) {
      const error = engineErrors.create('api:approvals:request-changed', { tool: tool.tool.name });
      return storeResult(ctx, call, localError(error), elapsed());
    }
  }
  const result = await ctx.outside(ctx.gateway.call(input));
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
  const disabled = await disabledResult(ctx, tool);
  if (disabled) {
    await storeResult(ctx, call, disabled, 0);
    return 'done';
  }
  const input = await callInput(ctx, tool, call.arguments, `${ctx.run.id}:${turn.step}:${call.id}`, ctx.signal);
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
      functionName: tool.tool.name,
      agentName: ctx.pinned.agentTools.agentName,
      argumentsJson: shownArguments(call.arguments, runBindingsFor(ctx, tool)),
      requestHash: requestHash(prepared, input.credential),
      ttlSeconds: ttl === undefined ? undefined : ttl / 1000,
    });
    await ctx.write(
      [{ type: 'approval-requested', data: { toolCallId: call.id, approval: approvalView(record) } }],
      undefined,
      undefined,
      tx,
    );
  });
  return 'waiting';
}

/** Handles one call of a turn that has no stored result yet. */
export async function handleCall(
  ctx: RunContext,
  turn: Turn,
  call: TurnCall,
  approvals: Map<string, ApprovalRecord>,
): Promise<CallOutcome> {
  const tools = ctx.pinned.agentTools.tools;
  const tool = tools.find((t) => t.definition.name === call.name);
  try {
    if (tool === undefined) {
      const names = tools.map((t) => t.definition.name);
      const guess = didYouMean(call.name, names);
      const error = engineErrors.create('api:runs:unknown-tool', {
        name: call.name,
        suggestion: guess === undefined ? '' : ` (did you mean ${guess}?)`,
        known: names.join(', ') || '(none)',
      });
      await storeResult(ctx, call, localError(error), 0);
      return 'done';
    }
    if (!tool.tool.requiresApproval) {
      await makeCall(ctx, turn, call, tool);
      return 'done';
    }
    if (!ctx.run.interactive) {
      const error = engineErrors.create('api:approvals:no-one-to-ask', { tool: tool.tool.name });
      await storeResult(ctx, call, localError(error), 0);
      return 'done';
    }
    const approval = approvals.get(call.id);
    if (approval === undefined) return await requestApproval(ctx, turn, call, tool);
    if (approval.status === 'Pending' && !approval.expired) return 'waiting';
    if (approval.status === 'Approved') {
      await makeCall(ctx, turn, call, tool, { id: approval.id, requestHash: approval.requestHash });
      return 'done';
    }
    if (approval.status === 'Rejected') {
      const error = engineErrors.create('api:approvals:rejected', {
        tool: tool.tool.name,
        reason: approval.reason ?? '(none given)',
      });
      await storeResult(ctx, call, localError(error), 0);
      return 'done';
    }
    return {
      fail: engineErrors.create('api:approvals:expired', { id: approval.id, expiresAt: approval.expiresAt ?? '' }),
    };
  } catch (error) {
    // A secret that does not open (changed, moved, or under a master key this worker lacks) fails the run loudly,
    // with nothing sent: the model cannot fix it, an operator must. The message names the secret's id only.
    if (!isMtError(error) || !error.code.startsWith('api:secrets:')) throw error;
    if (turn.started.has(call.id)) await storeResult(ctx, call, localError(error), 0);
    return { fail: error };
  }
}

/** Whether any of `calls` is of a tool that asks a person in this run (else its approvals need no read). */
export function needsApprovals(ctx: RunContext, calls: TurnCall[]): boolean {
  if (!ctx.run.interactive) return false;
  const tools = ctx.pinned.agentTools.tools;
  return calls.some((call) => tools.find((t) => t.definition.name === call.name)?.tool.requiresApproval === true);
}

/** The run's approvals by tool call id. */
export async function approvalsByCall(ctx: RunContext): Promise<Map<string, ApprovalRecord>> {
  return new Map((await runApprovals(ctx.db, ctx.run.id)).map((a) => [a.toolCallId, a]));
}
