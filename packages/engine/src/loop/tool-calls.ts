import { randomUUID } from 'node:crypto';
import { isMtError, type MtError } from '@maitento/errors';
import {
  type CallCredential,
  gatewayErrors,
  isPreparedRequest,
  type ToolCallInput,
  type ToolCallResult,
  toolResultText,
} from '@maitento/gateway';
import { type AuthProvider, didYouMean, type InteractionTool } from '@maitento/lang';
import {
  type ApprovalRecord,
  CONNECT_LINK_TTL_MS,
  createConnectLink,
  getAnyVersion,
  insertApproval,
  recordAudit,
  runApprovals,
  toolCallQuotaRefusal,
} from '@maitento/store';
import { approvalNow, approvedCallUse } from '../approvals/acting.js';
import { engineErrors } from '../errors.js';
import {
  approvalRequested,
  authorizationRequested,
  type LimitWait,
  toolCallStarted,
  toolResult,
} from '../journal/events.js';
import { type AuthorizationNeed, providerClient } from '../runs/connection-tokens.js';
import { approvalView } from '../runs/views.js';
import type { RunContext } from './context.js';
import type { Turn, TurnCall } from './history.js';
import { tracedRun } from '../telemetry/index.js';
import { subAgentCall, subAgentOf } from './sub-agents.js';
import {
  actingCheck,
  actingRefusal,
  callInput,
  connectionTokenReader,
  directRefusalResult,
  type LocalResult,
  runBindingsFor,
  shownArguments,
} from './tool-input.js';

/**
 * What became of one call: done (result stored), waiting for a person, waiting on the child run it started (a
 * task handed to an agent), or the run must fail.
 */
export type CallOutcome =
  | 'done'
  | 'waiting'
  | 'child'
  | { fail: MtError }
  /** Waiting for `endUser` to connect at `provider` (an `authorization-requested` is stored). */
  | { authorizing: { provider: string; endUser: string } }
  /** Over a limit with onLimit "wait" whose window opens later than the worker waits: the run waits durably. */
  | { limited: LimitWait };

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
  /** An OAuth2 call's credential, found just before (else found when the input is built). */
  credential?: CallCredential;
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
): Promise<LimitWait | undefined> {
  // An approval a person edited covers the edited call: it is made with their arguments (decision 0215), and its
  // tool-call-started shows them (what is sent, not what the model asked).
  const edited = options.approved?.editedArguments;
  const args = edited === undefined || edited === null ? call.arguments : edited;
  // The reads come from the cache once it saw the cache epoch read by the write of tool-call-started (a disable
  // or rotation answered before that write is seen).
  await startAndSync(ctx, turn, args === call.arguments ? call : { ...call, arguments: args }, options);
  const span = ctx.telemetry?.tool(tracedRun(ctx), tool, call.id, options.approved?.id);
  // A call made after a wait (approved, or resumed) is checked once, right before sending, by the checks of the
  // moment of acting (fresh reads); one made at once here, from the synced cache (versions, the tree's key). The
  // secret is read once, into the input.
  const acting = options.approved !== undefined || options.resumed;
  const [refused, input] = await Promise.all([
    acting ? undefined : directRefusalResult(ctx, tool),
    // An approved call's token is read again (time passed); one made at once uses the one just found.
    callInput(
      ctx,
      tool,
      args,
      callIdentity(ctx, turn.step, call.index),
      ctx.signal,
      options.approved === undefined ? options.credential : undefined,
    ),
  ]);
  if (span !== undefined) input.onSend = span.sending;
  const begin = performance.now();
  const elapsed = () => Math.round(performance.now() - begin);
  if (refused) {
    span?.end(refused, args);
    ctx.metrics?.toolCall(tool.tool.name, 'refused', (performance.now() - begin) / 1000);
    await storeResult(ctx, call, refused, elapsed());
    return undefined;
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
    // An OAuth2 call the upstream answered 401: its token is refreshed (unless another call did already) and the call
    // made once more, with the same Idempotency-Key; a second 401 is the call's result, never a loop.
    const sent = input.credential;
    if (stopped === undefined && 'status' in result && result.status === 401 && sent && 'bearer' in sent) {
      const renewed = await connectionTokenReader(ctx, undefined, sent.bearer)(tool.connector);
      if (renewed !== undefined && 'bearer' in renewed && renewed.bearer !== sent.bearer) {
        const { onSend: _once, ...again } = input;
        result = await ctx.outside(ctx.gateway.call({ ...again, credential: renewed }));
      }
    }
  }
  span?.end(result, args);
  const outcome = stopped !== undefined ? 'refused' : result.ok ? 'ok' : 'error';
  ctx.metrics?.toolCall(tool.tool.name, outcome, (performance.now() - begin) / 1000);
  if (ctx.signal.aborted) throw ctx.signal.reason;
  // Over a "wait" limit whose window opens later than a worker waits: nothing was sent, and the run waits durably.
  const limited = 'limited' in result ? result.limited : undefined;
  if (limited?.waitMs !== undefined) {
    return {
      toolCallId: call.id,
      index: call.index,
      tool: tool.tool.name,
      name: limited.name,
      limit: limited.limit,
      until: new Date(Date.now() + limited.waitMs).toISOString(),
    };
  }
  await storeResult(ctx, call, result, elapsed());
  return undefined;
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

/**
 * Whether this run can wait for its end user to connect: a person is there to hand the link to (an interactive
 * run), and this process can make a connect link (an OAuth client and MT_PUBLIC_URL's callback). Otherwise the
 * call fails with `api:connections:authorization-required`, nothing sent.
 */
function canWaitForAuthorization(ctx: RunContext): boolean {
  return ctx.run.interactive && ctx.oauth !== undefined && ctx.connectRedirectUri !== undefined;
}

// Makes a connect link for the call's end user and stores `authorization-requested` with its URL: the run then
// waits (PendingAuthorization) until the connection is made through the callback. A provider that cannot be used
// now answers the call with its error at once.
async function requestAuthorization(ctx: RunContext, call: TurnCall, need: AuthorizationNeed): Promise<CallOutcome> {
  const redirectUri = ctx.connectRedirectUri!;
  try {
    const stored = await getAnyVersion<AuthProvider>(
      ctx.db,
      ctx.run.namespace,
      'auth-provider',
      need.provider,
      need.providerVersion,
    );
    if (stored === undefined) {
      throw gatewayErrors.create('api:connections:provider-failed', {
        provider: need.provider,
        reason: `its version ${need.providerVersion}, which the connector pinned, is gone`,
      });
    }
    // A provider with no client id has its client registered (once, across processes) before its first link.
    const { provider } = await ctx.outside(
      providerClient(
        {
          db: ctx.db,
          secretKey: ctx.secretKey,
          readSecret: async (name) => (await ctx.reads.readSecretValue(ctx.run.namespace, { name }))?.value,
        },
        ctx.oauth!(),
        ctx.run.namespace,
        stored.resource,
        redirectUri,
      ),
    );
    const start = await ctx.outside(ctx.oauth!().startAuthorization(provider, redirectUri, need.scopes));
    const linkExpiresAt = new Date(Date.now() + CONNECT_LINK_TTL_MS);
    // The link, its audit row (the run made it) and the event that shows its URL commit together.
    await ctx.db.transaction(async (tx) => {
      const made = await createConnectLink(tx, ctx.secretKey, ctx.run.namespace, {
        provider: need.provider,
        providerVersion: stored.version,
        endUser: need.endUser,
        scopes: need.scopes,
        redirectUri,
        state: start.state,
        codeVerifier: start.codeVerifier,
        ...(start.nonce === undefined ? {} : { nonce: start.nonce }),
        createdBy: ctx.run.startedByKeyId,
        expiresAt: linkExpiresAt,
      });
      await recordAudit(tx, {
        actor: { kind: 'system', via: 'run' },
        requestId: null,
        namespace: ctx.run.namespace,
        action: 'connection.link-created',
        target: { kind: 'connection-link', id: made.id },
        after: {
          provider: need.provider,
          version: stored.version,
          endUser: need.endUser,
          scopes: need.scopes,
          runId: ctx.run.id,
        },
      });
      await ctx.journal.append(
        [
          authorizationRequested({
            toolCallId: call.id,
            index: call.index,
            provider: need.provider,
            endUser: need.endUser,
            scopes: need.scopes,
            reason: need.reason,
            url: start.url,
            linkExpiresAt: linkExpiresAt.toISOString(),
          }),
        ],
        undefined,
        tx,
      );
    });
    return { authorizing: { provider: need.provider, endUser: need.endUser } };
  } catch (error) {
    if (isMtError(error) && error.code.startsWith('api:connections:')) {
      await storeResult(ctx, call, localError(error), 0);
      return 'done';
    }
    // A secret that does not open fails the run (handleCall); a store that did not answer retries the job.
    if (isMtError(error) && (error.code.startsWith('api:secrets:') || error.code.startsWith('api:store:'))) throw error;
    // Anything else is an error inside Maitento (a bug, a stored provider that no longer reads): the run fails with
    // it, the call's result stored first. Retrying the job would only meet it again, and a retried call that was
    // marked started reads as one whose outcome is unknown, when nothing was sent.
    const failed = engineErrors.create('api:connections:link-failed', {
      tool: call.name,
      provider: need.provider,
      endUser: need.endUser,
      reason: internalReason(error),
    });
    await storeResult(ctx, call, localError(failed), 0);
    return { fail: failed };
  }
}

/** An unexpected error in one line for a run's error: its class and message, cut (never a stack). */
function internalReason(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
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
    // The namespace's tool calls of the day (docs/quotas.md): a call over it is not made; the model reads why.
    // A resumed call (it may have been sent) is finished as it began.
    if (!resumed && ctx.quotas !== undefined) {
      const overQuota = await toolCallQuotaRefusal(ctx.db, ctx.run.namespace, ctx.quotas);
      if (overQuota !== undefined) {
        await storeResult(ctx, call, localError(overQuota), 0);
        return 'done';
      }
    }
    let epoch = startedHere.get(identity);
    if (!startedHere.has(identity)) startedHere.set(identity, undefined);
    // An MCP tools/call carries no idempotency key: one whose outcome was lost is never sent again.
    if (resumed && tool.connector.mcp !== undefined) {
      const error = engineErrors.create('api:runs:call-outcome-unknown', { tool: tool.tool.name });
      await storeResult(ctx, call, localError(error), 0);
      return 'done';
    }
    // An OAuth2 call of an end user without a usable connection waits for them to connect, before any approval
    // (the person then approves the exact request, its token masked). The credential found is the call's.
    let credential: CallCredential | undefined;
    if (tool.connector.auth === 'OAuth2') {
      let need: AuthorizationNeed | undefined;
      const reading = connectionTokenReader(ctx, (n) => {
        need = n;
      })(tool.connector);
      if (!tool.tool.requiresApproval && !turn.started.has(call.index)) {
        // A call made without an approval is marked started while its token is read: one round trip, not two, as a
        // Header call's (decision 0280). A call that then waits for its person is started already, as the first call
        // of a turn always is (its turn's write marks it), and is made once they have connected.
        [credential, epoch] = await Promise.all([reading, started(ctx, turn, call)]);
        startedHere.set(identity, epoch);
      } else {
        credential = await reading;
      }
      if (need !== undefined && canWaitForAuthorization(ctx)) return await requestAuthorization(ctx, call, need);
    }
    if (!tool.tool.requiresApproval) {
      const limited = await makeCall(ctx, turn, call, tool, { resumed, epoch, credential });
      return limited === undefined ? 'done' : { limited };
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
      const limited = await makeCall(ctx, turn, call, tool, { approved: approval, resumed });
      return limited === undefined ? 'done' : { limited };
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
