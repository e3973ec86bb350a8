import { createHash, randomUUID } from 'node:crypto';
import { engineErrors, requestHash } from '@maitento/engine';
import { isMtError, type MtError } from '@maitento/errors';
import { isPreparedRequest, type ToolCallInput, type ToolCallResult, toolResultText } from '@maitento/gateway';
import type { Connector, Tool } from '@maitento/lang';
import {
  type ApprovalRecord,
  canonicalJson,
  expireApprovals,
  findApproval,
  findUnusedCallApproval,
  insertApproval,
  type StoredVersion,
  useCallApproval,
  wakeTopics,
} from '@maitento/store';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { serverErrors } from '../errors.js';
import type { ServerContext } from '../internal/context.js';
import { toolCredential } from '../internal/tool-credential.js';
import type { McpSettings } from './settings.js';
import { loadScopeTool, type McpScope } from './tools.js';

/** One tools/call of an MCP client. */
export interface McpCall {
  ctx: ServerContext;
  settings: McpSettings;
  scope: McpScope;
  name: string;
  arguments: unknown;
  /** Ends the wait (the request was cancelled, the session closed or the task was cancelled). */
  signal: AbortSignal;
  /** How long to wait for a person's answer; undefined waits until it comes (a task). */
  waitMs: number | undefined;
  /** Told while the call waits for a person, every `progressMs` (progress notifications). */
  onWaiting?: (approval: ApprovalRecord, waitedMs: number) => Promise<void>;
}

/** A tool result carrying a registry error: its message and code as JSON text, never a stack. */
export function errorResult(error: MtError): CallToolResult {
  const text = JSON.stringify({ error: error.message, code: error.code, ...(error.hint ? { hint: error.hint } : {}) });
  return { content: [{ type: 'text', text }], isError: true };
}

/** The gateway's result as the text a model gets (`toolResultText`: secrets already masked). */
function gatewayResult(result: ToolCallResult): CallToolResult {
  return { content: [{ type: 'text', text: toolResultText(result) }], isError: !result.ok };
}

type Loaded = { tool: StoredVersion<Tool>; connector: StoredVersion<Connector> };

async function callInput(call: McpCall, loaded: Loaded): Promise<ToolCallInput> {
  const { ctx, scope } = call;
  return {
    tool: loaded.tool.resource,
    connector: loaded.connector.resource,
    arguments: call.arguments,
    credential: await toolCredential(ctx.cache, scope.namespace, loaded.tool.resource),
    caller: scope.namespace,
    signal: call.signal,
  };
}

/** The key of approvals of one call outside a run: the canonical arguments' sha256 (the tool is its own column). */
export function callKey(args: unknown): string {
  return `mcp:${createHash('sha256')
    .update(canonicalJson(args ?? {}))
    .digest('hex')}`;
}

// Resolves after `ms`, or at once when `signal` ends or `woken` is told (it hands over its trigger).
const pause = (ms: number, signal: AbortSignal, woken: (trigger: () => void) => void) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
    woken(done);
  });

// Reads the approval until a person answered, it expired, the wait is over or the signal ends it: at once when
// `approval:<id>` is woken (answered or expired, on any server), else every `approvalPollMs` (the fallback).
async function waitForAnswer(call: McpCall, approval: ApprovalRecord): Promise<ApprovalRecord> {
  const { ctx, settings } = call;
  const start = Date.now();
  let nextProgress = start;
  let current = approval;
  // Read once more at once: an answer committed before the subscription below woke nobody here.
  let woken = true;
  let trigger: (() => void) | undefined;
  const off = ctx.wakeups.on(wakeTopics.approval(approval.id), () => {
    woken = true;
    trigger?.();
  });
  try {
    while (current.status === 'Pending' && !current.expired && !call.signal.aborted) {
      const waited = Date.now() - start;
      if (call.waitMs !== undefined && waited >= call.waitMs) break;
      if (call.onWaiting && Date.now() >= nextProgress) {
        await call.onWaiting(current, waited).catch(() => undefined);
        nextProgress += settings.progressMs;
      }
      if (!woken) {
        const left = call.waitMs === undefined ? settings.approvalPollMs : call.waitMs - waited;
        const toProgress = call.onWaiting ? nextProgress - Date.now() : settings.approvalPollMs;
        // Nobody is woken when an approval's expiry passes: the wait reads it again then.
        const toExpiry =
          current.expiresAt === null ? settings.approvalPollMs : Date.parse(current.expiresAt) - Date.now();
        const ms = Math.min(settings.approvalPollMs, left, toProgress, toExpiry + 5);
        await pause(Math.max(ms, 1), call.signal, (done) => {
          trigger = done;
        });
        trigger = undefined;
      }
      woken = false;
      current = (await findApproval(ctx.db, current.id, call.scope.namespace)) ?? current;
    }
  } finally {
    off();
  }
  return current;
}

// Finds the unused approval of this call (same namespace, tool and arguments) or asks for a new one.
async function approvalFor(call: McpCall, tool: Tool, key: string, hash: string): Promise<ApprovalRecord> {
  const { ctx, scope, settings } = call;
  return ctx.db.transaction(async (tx) => {
    // Two identical calls at once ask once: the second waits here and then finds the first one's approval.
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [JSON.stringify([scope.namespace, tool.name, key])]);
    const found = await findUnusedCallApproval(tx, scope.namespace, tool.name, key);
    if (found !== undefined) return found;
    return insertApproval(tx, {
      id: randomUUID(),
      namespace: scope.namespace,
      runId: null,
      toolCallId: key,
      functionName: tool.name,
      ...(scope.agent === undefined ? {} : { agentName: scope.agent }),
      argumentsJson: canonicalJson(call.arguments ?? {}),
      requestHash: hash,
      ...(settings.approvalTtlMs === undefined ? {} : { ttlSeconds: settings.approvalTtlMs / 1000 }),
    });
  });
}

// Delivers an answered (or expired) approval's outcome, once: the approved call is made with exactly the request shown.
async function deliver(call: McpCall, loaded: Loaded, key: string, answered: ApprovalRecord): Promise<CallToolResult> {
  const { ctx } = call;
  const tool = loaded.tool.resource.name;
  let approval = answered;
  if (approval.status === 'Pending' && approval.expired) {
    await expireApprovals(ctx.db, { id: approval.id });
    approval = { ...approval, status: 'Expired' };
  }
  if (!(await useCallApproval(ctx.db, approval.id, key, `${key}:used`))) {
    return errorResult(serverErrors.create('api:mcp:approval-used', { tool, id: approval.id }));
  }
  if (approval.status === 'Rejected') {
    return errorResult(
      engineErrors.create('api:approvals:rejected', { tool, reason: approval.reason ?? '(none given)' }),
    );
  }
  if (approval.status !== 'Approved') {
    return errorResult(
      serverErrors.create('api:mcp:approval-expired', { tool, id: approval.id, expiresAt: approval.expiresAt ?? '' }),
    );
  }
  const input = await callInput(call, loaded);
  input.approval = { id: approval.id };
  const prepared = await ctx.gateway.prepare(input);
  if (!isPreparedRequest(prepared)) return gatewayResult(prepared);
  if (requestHash(prepared, input.credential) !== approval.requestHash) {
    return errorResult(engineErrors.create('api:approvals:request-changed', { tool }));
  }
  // A retry of the approved call carries the same upstream Idempotency-Key.
  return gatewayResult(await ctx.gateway.call({ ...input, idempotencyKey: `mcp:${approval.id}` }));
}

async function callWithApproval(call: McpCall, loaded: Loaded): Promise<CallToolResult> {
  const input = await callInput(call, loaded);
  // A call that cannot be made (bad arguments, a blocked address, a missing secret) is answered at once.
  const prepared = await call.ctx.gateway.prepare(input);
  if (!isPreparedRequest(prepared)) return gatewayResult(prepared);
  const key = callKey(call.arguments);
  const tool = loaded.tool.resource;
  const approval = await waitForAnswer(
    call,
    await approvalFor(call, tool, key, requestHash(prepared, input.credential)),
  );
  if (approval.status === 'Pending' && !approval.expired) {
    return errorResult(serverErrors.create('api:mcp:approval-pending', { tool: tool.name, id: approval.id }));
  }
  return deliver(call, loaded, key, approval);
}

/**
 * Makes one tools/call through the gateway, as `POST /v1/extops/{name}/call` does (the tool's secret, the
 * egress policy, redirects, limits, masking); a tool that requires approval first asks a person
 * (docs/mcp.md). Every failure is a result with `isError` and its code.
 */
export async function callMcpTool(call: McpCall, onInternal: (err: unknown) => void): Promise<CallToolResult> {
  try {
    const loaded = await loadScopeTool(call.ctx, call.scope, call.name);
    if (loaded.tool.resource.requiresApproval) return await callWithApproval(call, loaded);
    return gatewayResult(await call.ctx.gateway.call(await callInput(call, loaded)));
  } catch (error) {
    if (isMtError(error)) return errorResult(error);
    onInternal(error);
    return errorResult(serverErrors.create('api:server:internal'));
  }
}
