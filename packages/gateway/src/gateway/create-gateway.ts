import { createCachingResolver, createEgressAgent, systemResolver } from '@maitento/egress';
import type { MtError } from '@maitento/errors';
import { Agent } from 'undici';
import { gatewayErrors } from '../errors.js';
import { mtErrorIn, networkCodeIn, UNDICI_TIMEOUTS } from '../internal/causes.js';
import { startDeadline, timedOut } from '../internal/deadline.js';
import { finalUrl } from '../steps/build-url.js';
import { createMcpRuntime } from '../mcp/runtime.js';
import { createAuthorizer } from '../steps/egress.js';
import { requestHash } from '../steps/request-hash.js';
import type { Redactor } from '../steps/redact.js';
import { type Assembled, assemble, viewOf } from './assemble.js';
import { admit, admitHere, admitRunStart, NONE } from './limits.js';
import { gatewayDefaults, resolveOptions } from './options.js';
import { type SendContext, send } from './send.js';
import type { ApprovalUse, Gateway, GatewayOptions, PreparedRequest, ToolCallInput, ToolCallResult } from './types.js';

// An in-flight slot outlives the call's deadline by this much before another process may take it.
const LEASE_MARGIN_MS = 30_000;

function errorResult(error: MtError, redact: Redactor | undefined): ToolCallResult {
  return { ok: false, error: redact === undefined ? error.message : redact(error.message), code: error.code };
}

/** Creates a gateway; the options are checked here and merged over frozen defaults. */
export function createGateway(gatewayOptions: GatewayOptions): Gateway {
  const options = resolveOptions(gatewayOptions);
  const ownsDispatcher = options.dispatcher === undefined;
  // One resolver for the address check and the agent's connect-time lookup: a new connection reuses the answers
  // the check just judged (kept 10 s) instead of asking DNS again.
  const resolver = options.resolver ?? createCachingResolver(systemResolver);
  const dispatcher =
    options.dispatcher ??
    createEgressAgent({
      policy: options.policy,
      resolver,
      connect: { ca: options.tls?.ca, timeout: options.timeoutMs },
    });
  let platformAgent: Agent | undefined;
  const ctx: SendContext = {
    options,
    dispatcher,
    // The platform's API is trusted by configuration, so it is reached without the public-address rule.
    platformDispatcher: () => {
      platformAgent ??= new Agent({ connect: { ca: options.tls?.ca, timeout: options.timeoutMs } });
      return platformAgent;
    },
    authorize: createAuthorizer(options.policy, resolver, gatewayDefaults.authorizationTtlMs),
    failure,
  };
  // Remote MCP servers' tools: the same dispatcher (egress policy at connect time), the same address check.
  const mcp = createMcpRuntime({ options, dispatcher, authorize: ctx.authorize });

  function failure(error: unknown, call: Assembled | undefined, timedOut: boolean, input: ToolCallInput) {
    const redact = call?.redact;
    const tool = input.tool.name;
    const code = (error as { code?: unknown })?.code;
    if (timedOut || (typeof code === 'string' && UNDICI_TIMEOUTS.has(code))) {
      return errorResult(
        gatewayErrors.create('api:gateway:timeout', { tool, seconds: options.timeoutMs / 1000 }),
        redact,
      );
    }
    if (input.signal?.aborted) return errorResult(gatewayErrors.create('api:gateway:cancelled', { tool }), redact);
    const mtError = mtErrorIn(error);
    if (mtError !== undefined) return errorResult(mtError, redact);
    const network = networkCodeIn(error);
    if (network !== undefined) {
      const host = call?.plan.connector.template.url.host ?? '(unknown)';
      const reason = `${network} ${(error as Error).message}`;
      return errorResult(gatewayErrors.create('api:gateway:upstream-unreachable', { tool, host, reason }), redact);
    }
    // A bug or a failed assertion: the stack goes to the operator's log, the caller gets the code alone.
    try {
      options.onInternalError?.(error, input.runId === undefined ? { tool } : { tool, runId: input.runId });
    } catch {
      // A failing logger must not turn one error result into a rejected call.
    }
    return errorResult(gatewayErrors.create('api:gateway:internal', { tool }), redact);
  }

  // Every step but sending, once: the request, its masked view and the hash a person approves.
  async function prepareCall(input: ToolCallInput, signal: AbortSignal) {
    const call = await assemble(input, options, ctx.authorize, signal);
    let request: Omit<PreparedRequest, 'hash'>;
    if (input.connector.mcp !== undefined) request = await mcp.prepare(call, input, signal);
    else {
      const headers = { ...call.headers };
      if (call.auth !== undefined) headers[call.auth.header] = call.auth.value;
      const url = finalUrl(call.plan.connector.template, call.path, call.plan.tool.name);
      request = { prepared: true, method: call.method, url, headers, body: call.body, view: viewOf(call) };
    }
    const hash = requestHash({ ...request, identity: input.idempotencyKey }, call.auth?.header);
    const prepared: PreparedRequest = { ...request, hash };
    return { call, prepared };
  }

  // Sending turns every error into a result.
  function sendAssembled(call: Assembled, input: ToolCallInput, signal: AbortSignal): Promise<ToolCallResult> {
    if (input.connector.mcp !== undefined) {
      return mcp.send(call, input, signal, (error) => failure(error, call, timedOut(signal, input.signal), input));
    }
    return send(call, ctx, signal, input);
  }

  // The one place a call is admitted under its tool's limit (docs/limits.md): before the call's own deadline starts
  // (a run's call may wait for its window up to `timeoutMs`), its in-flight slot held until the call ends. Every way
  // a call is sent (runs, REST, MCP) passes through `call` or `callApproved`.
  async function limited(input: ToolCallInput, make: () => Promise<ToolCallResult>): Promise<ToolCallResult> {
    if (options.limiter === undefined || (input.tool.limit === undefined && input.connector.limit === undefined)) {
      return make();
    }
    if (admitHere(options.limiter, input)) return make();
    let admitted: Awaited<ReturnType<typeof admit>>;
    try {
      admitted = await admit(options.limiter, input, options.timeoutMs, options.timeoutMs + LEASE_MARGIN_MS);
    } catch (error) {
      return failure(error, undefined, false, input);
    }
    if (!('release' in admitted)) return admitted;
    if (admitted === NONE) return make();
    try {
      return await make();
    } finally {
      // A release that fails leaves the slot to its lease; the call's result stands.
      await admitted.release().catch(() => {});
    }
  }

  return {
    async prepare(input): Promise<PreparedRequest | ToolCallResult> {
      const deadline = startDeadline(options.timeoutMs, input.signal);
      const { signal } = deadline;
      try {
        return (await prepareCall(input, signal)).prepared;
      } catch (error) {
        return failure(error, undefined, timedOut(signal, input.signal), input);
      } finally {
        deadline.end();
      }
    },

    call(input): Promise<ToolCallResult> {
      return limited(input, () => callNow(input));
    },

    callApproved(input: ToolCallInput, approval: ApprovalUse): Promise<ToolCallResult> {
      return limited(input, () => callApprovedNow(input, approval));
    },

    admitRunStart(input) {
      return admitRunStart(options.limiter, input);
    },
    listMcpTools(target, listOptions) {
      return mcp.list(target, listOptions);
    },

    async close(): Promise<void> {
      // Sessions first: closing one sends a DELETE through the dispatcher.
      await mcp.close();
      if (ownsDispatcher) await dispatcher.close();
      await platformAgent?.close();
    },
  };

  async function callNow(input: ToolCallInput): Promise<ToolCallResult> {
    const deadline = startDeadline(options.timeoutMs, input.signal);
    const { signal } = deadline;
    try {
      let call: Assembled;
      try {
        signal.throwIfAborted();
        if (input.tool.requiresApproval) {
          throw gatewayErrors.create('api:approvals:required', { tool: input.tool.name });
        }
        call = await assemble(input, options, ctx.authorize, signal);
      } catch (error) {
        return failure(error, undefined, timedOut(signal, input.signal), input);
      }
      return await sendAssembled(call, input, signal);
    } finally {
      deadline.end();
    }
  }

  async function callApprovedNow(input: ToolCallInput, approval: ApprovalUse): Promise<ToolCallResult> {
    const deadline = startDeadline(options.timeoutMs, input.signal);
    const { signal } = deadline;
    try {
      let prepared: Awaited<ReturnType<typeof prepareCall>>;
      try {
        signal.throwIfAborted();
        prepared = await prepareCall(input, signal);
      } catch (error) {
        return failure(error, undefined, timedOut(signal, input.signal), input);
      }
      const { call } = prepared;
      if (prepared.prepared.hash !== approval.hash) {
        return errorResult(
          gatewayErrors.create('api:approvals:request-changed', { tool: input.tool.name }),
          call.redact,
        );
      }
      const refused = await approval.consume(prepared.prepared.hash);
      if (refused !== undefined) return errorResult(refused, call.redact);
      return await sendAssembled(call, input, signal);
    } finally {
      deadline.end();
    }
  }
}
