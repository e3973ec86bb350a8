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
import { type CallAuthorization, connectionForCall, directCredential } from '../calls/connection-for-call.js';
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
  /**
   * The person the call acts for (the request's `Mt-End-User` header): an OAuth2 connector's call uses their
   * connection, and without one the call's result carries their connect link (docs/mcp.md).
   */
  endUser?: string | undefined;
  /**
   * How the call asks its client to open a URL (URL-mode elicitation, MCP 2025-11-25): set only when the client
   * declared `elicitation.url` and the call is answered over a stream that can carry a request (docs/mcp.md).
   */
  elicitation?: UrlElicitation | undefined;
  /** Told while the call waits for a person, every `progressMs` (progress notifications). */
  onWaiting?: (approval: ApprovalRecord, waitedMs: number) => Promise<void>;
}

/** A URL-mode elicitation related to one tools/call, through the SDK's `Server` (elicitInput, the completion notifier). */
export interface UrlElicitation {
  /** Sends `elicitation/create` (`mode: "url"`) and resolves with the client's action; rejects when it fails. */
  ask(
    params: { elicitationId: string; url: string; message: string },
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<'accept' | 'decline' | 'cancel'>;
  /** Sends `notifications/elicitation/complete` for `elicitationId`. */
  complete(elicitationId: string): Promise<void>;
}

/** The HTTP header of an MCP request that names the end user its tool calls act for. */
export const END_USER_HEADER = 'mt-end-user';

/** `{ endUser }` from the header's value, when it names one. */
export function endUserOf(value: unknown): { endUser?: string } {
  const text = Array.isArray(value) ? value[0] : value;
  return typeof text === 'string' && text.trim() !== '' ? { endUser: text.trim() } : {};
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
  if (result.limited !== undefined) {
    const refused: CallToolResult = { content: [{ type: 'text', text: toolResultText(result) }], isError: true };
    Object.defineProperty(refused, LIMITED, { value: result.limited, enumerable: false });
    return refused;
  }
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

/** An OAuth2 connector's credential for the call's end user (undefined for another connector). */
function connectionToken(call: McpCall, loaded: Loaded) {
  return () => directCredential(call.ctx, call.scope.namespace, loaded, call.endUser ?? null);
}

/**
 * The connection first (before an approval is asked for): when the call's end user has no usable connection at the
 * connector's provider, the call is not made and its result is `api:connections:authorization-required` with a
 * connect link for that person (`authorization.url`), made as `POST /v1/connections/links` makes one; the client
 * shows it, the person connects, and the client calls again. A client that declared URL-mode elicitation is asked to
 * open the link instead, and the call waits for the connection (elicitConnection). Undefined when the call can go
 * ahead.
 */
async function authorizationFirst(call: McpCall, loaded: Loaded): Promise<CallToolResult | undefined> {
  if (loaded.connector.resource.auth !== 'OAuth2') return undefined;
  const found = await connectionForCall(call.ctx, call.scope.namespace, loaded, call.endUser ?? null, {
    createdBy: call.keyId,
    audit: { actor: { kind: 'system', via: 'mcp' }, requestId: null },
  });
  if (!('refused' in found)) return undefined;
  if (found.authorization === undefined || found.linkId === undefined) return errorResult(found.refused);
  if (call.elicitation !== undefined) {
    const wanted = found.authorization;
    const outcome = await elicitConnection(call, loaded, call.elicitation, wanted, {
      id: found.linkId,
      url: wanted.url,
      expiresAt: new Date(wanted.expiresAt),
    });
    if (outcome === 'connected') return undefined;
    if (outcome !== 'unanswered') {
      return errorResult(
        serverErrors.create('api:mcp:authorization-declined', {
          tool: loaded.tool.resource.name,
          provider: wanted.provider,
          endUser: wanted.endUser,
          action: outcome,
        }),
      );
    }
    // No answer in time (or the client could not be asked): the result carries the link, as for every client.
  }
  const text = JSON.stringify({
    error: found.refused.message,
    code: found.refused.code,
    hint: 'Give the person this URL to connect their account, then call the tool again',
    authorization: found.authorization,
  });
  return { content: [{ type: 'text', text }], isError: true };
}

/**
 * Asks the client to open the connect link (URL-mode elicitation; its id is the link's) and, once the person
 * accepted, waits until their connection is usable: read at once, when `connection:<hash>` is woken (the callback
 * stored it, on any server), every `approvalPollMs` only while wake-ups are not listening; until the link expires or
 * the call's wait (`MT_MCP_APPROVAL_WAIT`, none for a task) is over. Connected, the client is told
 * (`notifications/elicitation/complete`) and the call goes on. Decision 0370.
 */
async function elicitConnection(
  call: McpCall,
  loaded: Loaded,
  elicitation: UrlElicitation,
  need: Pick<CallAuthorization, 'provider' | 'endUser' | 'reason'>,
  link: { id: string; url: string; expiresAt: Date },
): Promise<'connected' | 'decline' | 'cancel' | 'unanswered'> {
  const { ctx, settings } = call;
  const deadline = Math.min(
    link.expiresAt.getTime(),
    call.waitMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + call.waitMs,
  );
  let woken = true;
  let trigger: (() => void) | undefined;
  const wake = () => {
    woken = true;
    trigger?.();
  };
  // Subscribed before asking: a person quicker than the client's answer still wakes this call.
  const off = ctx.wakeups.on(wakeTopics.connection(call.scope.namespace, need.provider, need.endUser), wake);
  const offLost = ctx.wakeups.onLost?.(wake) ?? (() => {});
  try {
    let action: 'accept' | 'decline' | 'cancel';
    try {
      action = await elicitation.ask(
        {
          elicitationId: link.id,
          url: link.url,
          message:
            `${loaded.tool.resource.name} acts for ${need.endUser} at ${need.provider}, which is not connected ` +
            `(${need.reason}): open this link to connect the account; the call goes on once it is connected.`,
        },
        call.signal,
        Math.max(deadline - Date.now(), 1),
      );
    } catch {
      // The client did not answer in time or refused the request: the result with the link answers instead.
      return 'unanswered';
    }
    if (action !== 'accept') return action;
    while (!call.signal.aborted && Date.now() < deadline) {
      if (!woken) {
        const poll = ctx.wakeups.listening ? Number.POSITIVE_INFINITY : settings.approvalPollMs;
        await pause(Math.max(Math.min(poll, deadline - Date.now(), 2 ** 31 - 1), 1), call.signal, (done) => {
          trigger = done;
        });
        trigger = undefined;
      }
      woken = false;
      let missing = false;
      await directCredential(call.ctx, call.scope.namespace, loaded, call.endUser ?? null, () => {
        missing = true;
      });
      if (!missing) {
        await elicitation.complete(link.id).catch(() => undefined);
        return 'connected';
      }
    }
    return 'unanswered';
  } finally {
    off();
    offLost();
  }
}

function callInput(call: McpCall, loaded: Loaded, approvalId?: string): Promise<ToolCallInput> {
  const { ctx, scope } = call;
  return callInputOf({
    tool: loaded.tool.resource,
    connector: loaded.connector.resource,
    arguments: call.arguments,
    readSecret: cacheSecrets(ctx.cache, scope.namespace),
    connectionToken: connectionToken(call, loaded),
    caller: scope.namespace,
    signal: call.signal,
    // The call's identity is its approval: the hash covers it, and a retry carries the same Idempotency-Key.
    ...(approvalId === undefined ? {} : { idempotencyKey: `mcp:${approvalId}` }),
  }).then((input) => ({
    ...input,
    // What a limit's perKey and perEndUser count (docs/limits.md).
    keyId: call.keyId,
    ...(call.endUser === undefined ? {} : { endUser: call.endUser }),
  }));
}

/**
 * Set on a tools/call result refused by a limit (api:limits:exceeded): what the HTTP answer of a plain tools/call
 * carries (429, `Retry-After`, `RateLimit`, `RateLimit-Policy`; docs/limits.md). A symbol: never serialised.
 */
export const LIMITED = Symbol('limited');

/** The JSON-RPC error code of a plain tools/call over a limit (in the range JSON-RPC leaves to servers; 429's echo). */
export const LIMITED_JSONRPC_CODE = -32029;

/** The limit that refused a tools/call's result, if one did. */
export function limitedOf(value: unknown): NonNullable<ToolCallResult['limited']> | undefined {
  return typeof value === 'object' && value !== null
    ? (value as { [LIMITED]?: NonNullable<ToolCallResult['limited']> })[LIMITED]
    : undefined;
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
    const authorization = await authorizationFirst(call, loaded);
    if (authorization !== undefined) return authorization;
    if (loaded.tool.resource.requiresApproval) return await callWithApproval(call, loaded);
    const input = await callInput(call, loaded);
    return gatewayResult(await tracedCall(call.ctx, loaded, input, (i) => call.ctx.gateway.call(i), call), loaded);
  } catch (error) {
    if (isMtError(error)) return errorResult(error);
    onInternal(error);
    return errorResult(serverErrors.create('api:server:internal'));
  }
}
