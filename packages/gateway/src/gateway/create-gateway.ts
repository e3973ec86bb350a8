import { createCachingResolver, createEgressAgent, systemResolver } from '@maitento/egress';
import type { MtError } from '@maitento/errors';
import { Agent } from 'undici';
import { gatewayErrors } from '../errors.js';
import { mtErrorIn, networkCodeIn, UNDICI_TIMEOUTS } from '../internal/causes.js';
import { Deadline, DeadlineClock } from '../internal/deadline.js';
import { finalUrl } from '../steps/build-url.js';
import { createMcpRuntime } from '../mcp/runtime.js';
import { createAuthorizer } from '../steps/egress.js';
import type { Redactor } from '../steps/redact.js';
import { type Assembled, assemble, viewOf } from './assemble.js';
import { gatewayDefaults, resolveOptions } from './options.js';
import { type SendContext, send } from './send.js';
import type { Gateway, GatewayOptions, PreparedRequest, ToolCallInput, ToolCallResult } from './types.js';

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
  const clock = new DeadlineClock(options.timeoutMs);
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
  const mcp = createMcpRuntime({ options, dispatcher, authorize: ctx.authorize, clock });

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
      options.onInternalError?.(error, { tool });
    } catch {
      // A failing logger must not turn one error result into a rejected call.
    }
    return errorResult(gatewayErrors.create('api:gateway:internal', { tool }), redact);
  }

  return {
    async prepare(input): Promise<PreparedRequest | ToolCallResult> {
      const deadline = new Deadline(clock, options.timeoutMs, input.signal);
      try {
        const assembling = assemble(input, options, ctx.authorize, deadline);
        const call = assembling instanceof Promise ? await assembling : assembling;
        if (input.connector.mcp !== undefined) return await mcp.prepare(call, input, deadline);
        const headers = { ...call.headers };
        if (call.auth !== undefined) headers[call.auth.header] = call.auth.value;
        const url = finalUrl(call.plan.connector.template, call.path, call.plan.tool.name);
        return { prepared: true, method: call.method, url, headers, body: call.body, view: viewOf(call) };
      } catch (error) {
        return failure(error, undefined, deadline.timedOut, input);
      } finally {
        deadline.dispose();
      }
    },

    call(input): Promise<ToolCallResult> {
      const deadline = new Deadline(clock, options.timeoutMs, input.signal);
      let assembling: Assembled | Promise<Assembled>;
      try {
        if (deadline.aborted) throw new Error('aborted');
        if (input.tool.requiresApproval && input.approval === undefined) {
          throw gatewayErrors.create('api:approvals:required', { tool: input.tool.name });
        }
        assembling = assemble(input, options, ctx.authorize, deadline);
      } catch (error) {
        deadline.dispose();
        return Promise.resolve(failure(error, undefined, deadline.timedOut, input));
      }
      // Sending owns the deadline from here (it disposes it) and turns every error into a result: one async layer.
      if (input.connector.mcp !== undefined) {
        const sendMcp = (call: Assembled) =>
          mcp.send(call, input, deadline, (error) => failure(error, call, deadline.timedOut, input));
        if (!(assembling instanceof Promise)) return sendMcp(assembling);
        return assembling.then(sendMcp, (error: unknown) => {
          deadline.dispose();
          return failure(error, undefined, deadline.timedOut, input);
        });
      }
      if (!(assembling instanceof Promise)) return send(assembling, ctx, deadline, input);
      return assembling.then(
        (call) => send(call, ctx, deadline, input),
        (error: unknown) => {
          deadline.dispose();
          return failure(error, undefined, deadline.timedOut, input);
        },
      );
    },

    listMcpTools(target, listOptions) {
      return mcp.list(target, listOptions);
    },

    async close(): Promise<void> {
      // Sessions first: closing one sends a DELETE through the dispatcher.
      await mcp.close();
      clock.stop();
      if (ownsDispatcher) await dispatcher.close();
      await platformAgent?.close();
    },
  };
}
