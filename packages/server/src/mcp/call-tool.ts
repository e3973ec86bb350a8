import { createHash, randomUUID } from 'node:crypto';
import { approvalNow, approvedCallUse, engineErrors } from '@maitento/engine';
import { isMtError, type MtError } from '@maitento/errors';
import {
  type ApprovalUse,
  callInputOf,
  gatewayErrors,
  isPreparedRequest,
  type ToolCallInput,
  type ToolCallResult,
  toolResultText,
} from '@maitento/gateway';
import type { Tool } from '@maitento/lang';
import {
  type ApprovalRecord,
  canonicalJson,
  expireApprovals,
  findApproval,
  findUnusedCallApproval,
  insertApproval,
  markApprovalDelivered,
  wakeTopics,
} from '@maitento/store';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { cacheSecrets } from '../calls/tool-credential.js';
import { tracedCall } from '../calls/traced-call.js';
import { serverErrors } from '../errors.js';
import type { ServerContext } from '../server/context.js';
import type { McpSettings } from './settings.js';
import { type LoadedTool, loadScopeTool, type McpScope, outputSchemaOf } from './tools.js';

/** One tools/call of an MCP client. */
export interface McpCall {
  ctx: ServerContext;
  settings: McpSettings;
  scope: McpScope;
  /** The session's key: a call made after a wait is refused when it was deleted meanwhile. */
  keyId: string;
  name: string;
  arguments: unknown;
  /** The tool, when the request's handler loaded it already (one load a call); else the call loads it. */
  loaded?: LoadedTool | undefined;
  /** The caller's W3C trace context (the HTTP request's `traceparent`): the call's span continues its trace. */
  traceparent?: string | undefined;
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

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The gateway's result as the text a model gets (`toolResultText`: secrets already masked) and, for a tool with an
 * `outputSchema`, the same body as `structuredContent`. The gateway checked a 2xx body against the connector's
 * `schema.response` (the tool's `outputSchema`): a body that does not match is already an error result
 * (`api:gateway:response-invalid`); one that could not be checked (cut at the size limit) is made one here, so a
 * successful result of such a tool always carries an object that matches its schema, as MCP requires.
 */
function gatewayResult(result: ToolCallResult, loaded?: Loaded): CallToolResult {
  const schema = loaded === undefined ? undefined : outputSchemaOf(loaded.connector.resource);
  if (schema === undefined || !result.ok) {
    return { content: [{ type: 'text', text: toolResultText(result) }], isError: !result.ok };
  }
  if (result.truncated === undefined && isObject(result.body)) {
    return {
      content: [{ type: 'text', text: toolResultText(result) }],
      structuredContent: result.body,
      isError: false,
    };
  }
  const problems =
    result.truncated === undefined
      ? 'response is not a JSON object'
      : `response was cut at ${result.truncated.limit} bytes, so it could not be checked`;
  const error = gatewayErrors.create('api:gateway:response-invalid', { tool: loaded!.tool.resource.name, problems });
  const failed: ToolCallResult = { ...result, ok: false, error: error.message, code: error.code };
  return { content: [{ type: 'text', text: toolResultText(failed) }], isError: true };
}

type Loaded = LoadedTool;

function callInput(call: McpCall, loaded: Loaded, approvalId?: string): Promise<ToolCallInput> {
  const { ctx, scope } = call;
  return callInputOf({
    tool: loaded.tool.resource,
    connector: loaded.connector.resource,
    arguments: call.arguments,
    readSecret: cacheSecrets(ctx.cache, scope.namespace),
    caller: scope.namespace,
    signal: call.signal,
    // The call's identity is its approval: the hash covers it, and a retry carries the same Idempotency-Key.
    ...(approvalId === undefined ? {} : { idempotencyKey: `mcp:${approvalId}` }),
  });
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
  // Wake-ups stopped arriving: read now, then every `approvalPollMs` until they are back.
  const offLost =
    ctx.wakeups.onLost?.(() => {
      woken = true;
      trigger?.();
    }) ?? (() => {});
  try {
    while (approvalNow(current) === 'waiting' && !call.signal.aborted) {
      const waited = Date.now() - start;
      if (call.waitMs !== undefined && waited >= call.waitMs) break;
      if (call.onWaiting && Date.now() >= nextProgress) {
        await call.onWaiting(current, waited).catch(() => undefined);
        nextProgress += settings.progressMs;
      }
      if (!woken) {
        // The fallback read only while wake-ups are not listening (as every waiter's); its own deadlines always.
        const poll = ctx.wakeups.listening ? Number.POSITIVE_INFINITY : settings.approvalPollMs;
        const left = call.waitMs === undefined ? poll : call.waitMs - waited;
        const toProgress = call.onWaiting ? nextProgress - Date.now() : poll;
        // Nobody is woken when an approval's expiry passes: the wait reads it again then.
        const toExpiry = current.expiresAt === null ? poll : Date.parse(current.expiresAt) - Date.now();
        // setTimeout's longest wait (about 24.8 days): a wait with no deadline wakes then and waits again.
        const ms = Math.min(poll, left, toProgress, toExpiry + 5, 2 ** 31 - 1);
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
    offLost();
  }
  return current;
}

// Finds the unused approval of this call (same namespace, tool and arguments) or asks for a new one.
async function approvalFor(
  call: McpCall,
  tool: Tool,
  key: string,
  fresh: { id: string; hash: string },
): Promise<ApprovalRecord> {
  const { ctx, scope, settings } = call;
  return ctx.db.transaction(async (tx) => {
    // Two identical calls at once ask once: the second waits here and then finds the first one's approval.
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [JSON.stringify([scope.namespace, tool.name, key])]);
    const found = await findUnusedCallApproval(tx, scope.namespace, tool.name, key);
    if (found !== undefined) return found;
    return insertApproval(tx, {
      id: fresh.id,
      namespace: scope.namespace,
      runId: null,
      toolCallId: key,
      functionName: tool.name,
      ...(scope.agent === undefined ? {} : { agentName: scope.agent }),
      argumentsJson: canonicalJson(call.arguments ?? {}),
      requestHash: fresh.hash,
      ...(settings.approvalTtlMs === undefined ? {} : { ttlSeconds: settings.approvalTtlMs / 1000 }),
      policy: tool.approval ?? null,
      startedByKeyId: call.keyId,
    });
  });
}

// The approval's last word before sending, after the wait: the checks of the moment of acting (the tool and
// connector versions still enabled, the session's key still there), then the approval consumed by the statement that
// checks its hash and expiry: approvedCallUse, the one decision runs make too. The secret is read once, into the
// call's input built just before.
function approvalUse(call: McpCall, loaded: Loaded, approval: ApprovalRecord): ApprovalUse {
  const { ctx, scope } = call;
  const tool = loaded.tool.resource;
  const check = {
    reads: ctx.cache,
    db: ctx.db,
    namespace: scope.namespace,
    keyId: call.keyId,
    tool: { name: tool.name, version: loaded.tool.version },
    connector: { name: loaded.connector.name, version: loaded.connector.version },
  };
  return approvedCallUse(check, approval, {
    used: () => serverErrors.create('api:mcp:approval-used', { tool: tool.name, id: approval.id }),
  });
}

// Delivers an answered (or expired) approval's outcome, once: the approved call is made with exactly the request
// shown, only through the gateway's callApproved.
async function deliver(call: McpCall, loaded: Loaded, answered: ApprovalRecord): Promise<CallToolResult> {
  const { ctx } = call;
  const tool = loaded.tool.resource.name;
  let approval = answered;
  const now = approvalNow(approval);
  if (approval.status === 'Pending' && now === 'expired') {
    await expireApprovals(ctx.db, { id: approval.id });
    approval = { ...approval, status: 'Expired' };
  }
  // An approval made outside a run lives MT_APPROVAL_TTL (an hour by default), answered or not, until used.
  if (now === 'approved') {
    const input = await callInput(call, loaded, approval.id);
    const use = approvalUse(call, loaded, approval);
    return gatewayResult(
      await tracedCall(ctx, loaded, input, (i) => ctx.gateway.callApproved(i, use), { ...call, callId: approval.id }),
      loaded,
    );
  }
  if (!(await markApprovalDelivered(ctx.db, approval.id))) {
    return errorResult(serverErrors.create('api:mcp:approval-used', { tool, id: approval.id }));
  }
  if (approval.status === 'Rejected') {
    return errorResult(
      engineErrors.create('api:approvals:rejected', { tool, reason: approval.reason ?? '(none given)' }),
    );
  }
  return errorResult(
    serverErrors.create('api:mcp:approval-expired', { tool, id: approval.id, expiresAt: approval.expiresAt ?? '' }),
  );
}

async function callWithApproval(call: McpCall, loaded: Loaded): Promise<CallToolResult> {
  // The id is chosen first: it is the call's identity, so the hash the person approves covers it.
  const id = randomUUID();
  const input = await callInput(call, loaded, id);
  // A call that cannot be made (bad arguments, a blocked address, a missing secret) is answered at once.
  const prepared = await call.ctx.gateway.prepare(input);
  if (!isPreparedRequest(prepared)) return gatewayResult(prepared);
  const tool = loaded.tool.resource;
  const key = callKey(call.arguments);
  const approval = await waitForAnswer(call, await approvalFor(call, tool, key, { id, hash: prepared.hash }));
  if (approvalNow(approval) === 'waiting') {
    return errorResult(serverErrors.create('api:mcp:approval-pending', { tool: tool.name, id: approval.id }));
  }
  return deliver(call, loaded, approval);
}

/**
 * Makes one tools/call through the gateway, as `POST /v1/extops/{name}/call` does (the tool's secret, the
 * egress policy, redirects, limits, masking); a tool that requires approval first asks a person
 * (docs/mcp.md). Every failure is a result with `isError` and its code.
 */
export async function callMcpTool(call: McpCall, onInternal: (err: unknown) => void): Promise<CallToolResult> {
  try {
    const loaded = call.loaded ?? (await loadScopeTool(call.ctx, call.scope, call.name));
    if (loaded.tool.resource.requiresApproval) return await callWithApproval(call, loaded);
    const input = await callInput(call, loaded);
    return gatewayResult(await tracedCall(call.ctx, loaded, input, (i) => call.ctx.gateway.call(i), call), loaded);
  } catch (error) {
    if (isMtError(error)) return errorResult(error);
    onInternal(error);
    return errorResult(serverErrors.create('api:server:internal'));
  }
}
