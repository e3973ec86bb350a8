import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { isMtError } from '@maitento/errors';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  type JSONRPCMessage,
  type JSONRPCRequest,
  ListToolsRequestSchema,
  McpError,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import type { ServerContext } from '../server/context.js';
import { gatewayErrors } from '@maitento/gateway';
import {
  callMcpTool,
  END_USER_HEADER,
  endUserOf,
  LIMITED,
  LIMITED_JSONRPC_CODE,
  limitedOf,
  type McpCall,
  type UrlElicitation,
} from './call-tool.js';
import { SessionTransport } from './session-transport.js';
import type { McpSettings } from './settings.js';
import { type LoadedTool, listScopeTools, loadScopeTool, type McpScope, toolAnnotations, toolTitle } from './tools.js';

// The in-memory task store of one session, which also stops a task's wait when the client cancels it.
class SessionTaskStore extends InMemoryTaskStore {
  readonly cancels = new Map<string, AbortController>();

  override async updateTaskStatus(
    taskId: string,
    status: Task['status'],
    statusMessage?: string,
    sessionId?: string,
  ): Promise<void> {
    await super.updateTaskStatus(taskId, status, statusMessage, sessionId);
    if (status === 'cancelled') this.cancels.get(taskId)?.abort();
  }
}

/** One MCP session: bound to the API key that opened it and to its endpoint. */
export interface McpSession {
  readonly transport: SessionTransport;
  readonly server: Server;
  readonly scope: McpScope;
  readonly keyId: string;
  /** `/mcp` or `/mcp/agents/{name}`. */
  readonly endpoint: string;
  lastUsed: number;
  /**
   * Answers a plain `tools/call` (see isPlainToolCall) as one JSON-RPC response: run directly, without the SDK's
   * `Server`, when it is well-formed and its tool needs no person's approval; else handed to the `Server`.
   * Undefined when the call must be answered over an SSE stream instead (it may ask for a URL elicitation).
   */
  callPlain(request: JSONRPCRequest, headers: IncomingHttpHeaders): Promise<JSONRPCMessage | undefined>;
  close(): Promise<void>;
}

/** What a session needs from the routes that open it. */
export interface SessionHooks {
  onOpened(id: string, session: McpSession): void;
  onClosed(id: string): void;
  onInternal(err: unknown): void;
}

/**
 * The tool of a tools/call, loaded once for the call. A name the endpoint does not serve is a bad request, not a
 * failed call: JSON-RPC -32602 (invalid params), as the MCP specification answers it. Other refusals (a disabled
 * version) stay tool results: undefined here, and the call loads again and answers with the refusal.
 */
async function loadOrRefuse(ctx: ServerContext, scope: McpScope, name: string): Promise<LoadedTool | undefined> {
  try {
    return await loadScopeTool(ctx, scope, name);
  } catch (error) {
    if (isMtError(error) && error.code === 'api:extops:not-found') {
      throw new McpError(ErrorCode.InvalidParams, error.message, { code: error.code });
    }
    return undefined;
  }
}

const SERVER_INFO = { name: 'maitento', version: '0.1.0' };

/**
 * The `params` of a well-formed `tools/call` the route may run directly: a name, arguments that are an object (or
 * none). Anything else goes to the SDK's `Server`, whose schema answers it (-32602) exactly as before.
 */
function directParams(params: unknown): { name: string; arguments?: Record<string, unknown> } | undefined {
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string') return undefined;
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) return undefined;
  return params as { name: string; arguments?: Record<string, unknown> };
}

/** Makes a session's MCP server and transport; it is registered once the client's initialize is answered. */
export function openSession(
  ctx: ServerContext,
  settings: McpSettings,
  scope: McpScope,
  keyId: string,
  endpoint: string,
  hooks: SessionHooks,
): McpSession {
  const tasks = new SessionTaskStore();
  const ended = new AbortController();
  const server = new Server(SERVER_INFO, {
    capabilities: {
      tools: { listChanged: true },
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    },
    taskStore: tasks,
    instructions:
      'Tools deployed on Maitento. Some need a person to approve each call: such a call waits for the answer, ' +
      'or names the pending approval; call it again with the same arguments to get the outcome.',
  });
  let sessionId: string | undefined;
  const transport = new SessionTransport({
    sessionIdGenerator: randomUUID,
    onsessioninitialized: (id) => {
      sessionId = id;
      hooks.onOpened(id, session);
    },
  });
  // A tools/call without a task, as both paths make it: the SDK's handler below and the direct path.
  const callTool = (
    name: string,
    args: unknown,
    loaded: LoadedTool | undefined,
    signal: AbortSignal,
    traceparent: unknown,
    endUser: unknown,
    onWaiting?: McpCall['onWaiting'],
    elicitation?: UrlElicitation,
  ): Promise<CallToolResult> =>
    callMcpTool(
      {
        ...endUserOf(endUser),
        ctx,
        settings,
        scope,
        keyId,
        name,
        arguments: args ?? {},
        loaded,
        signal,
        waitMs: settings.approvalWaitMs,
        traceparent: typeof traceparent === 'string' ? traceparent : undefined,
        ...(onWaiting === undefined ? {} : { onWaiting }),
        ...(elicitation === undefined ? {} : { elicitation }),
      },
      hooks.onInternal,
    );
  // A client that declared URL-mode elicitation (MCP 2025-11-25) is asked to open a connect link in the call's own
  // stream (decision 0370).
  const urlElicitation = () => server.getClientCapabilities()?.elicitation?.url !== undefined;

  const session: McpSession = {
    transport,
    server,
    scope,
    keyId,
    endpoint,
    lastUsed: Date.now(),
    callPlain: async (request, headers) => {
      const params = directParams(request.params);
      if (params === undefined) return transport.answer(request, headers);
      let loaded: LoadedTool | undefined;
      try {
        loaded = await loadOrRefuse(ctx, scope, params.name);
      } catch (error) {
        // As the SDK's Protocol answers a handler's McpError.
        const { code, message, data } = error as McpError;
        return { jsonrpc: '2.0', id: request.id, error: { code, message, ...(data === undefined ? {} : { data }) } };
      }
      // A call of an OAuth2 tool from a client that declared URL-mode elicitation may ask it to open a connect link:
      // a request related to the call, which needs the call's SSE stream (the route hands it to the SDK's transport).
      if (
        loaded?.connector.resource.auth === 'OAuth2' &&
        urlElicitation() &&
        headers.accept?.includes('text/event-stream') === true
      ) {
        return undefined;
      }
      // A call that may wait for a person stays with the Server: its bounded wait, cancellation and answer are the
      // SDK's, as for every call with a task or a progress token.
      if (loaded === undefined || loaded.tool.resource.requiresApproval) return transport.answer(request, headers);
      const { id } = request;
      return transport.run(id, async (signal) => {
        const result = await callTool(
          params.name,
          params.arguments,
          loaded,
          signal,
          headers.traceparent,
          headers[END_USER_HEADER],
        );
        const limited = limitedOf(result);
        if (limited === undefined) return { jsonrpc: '2.0', id, result };
        // Over a limit: a JSON-RPC error, answered with HTTP 429 and the same fields as REST (the route reads the
        // symbol; docs/limits.md).
        const error = gatewayErrors.create('api:limits:exceeded', {
          name: params.name,
          done: 'called',
          one: 'call',
          limit: limited.limit,
          seconds: limited.retryAfterSeconds,
        });
        const answer: JSONRPCMessage = {
          jsonrpc: '2.0',
          id,
          error: {
            code: LIMITED_JSONRPC_CODE,
            message: error.message,
            data: { code: error.code, retryAfterSeconds: limited.retryAfterSeconds, limit: limited.limit },
          },
        };
        Object.defineProperty(answer, LIMITED, { value: limited, enumerable: false });
        return answer;
      });
    },
    close: async () => {
      ended.abort();
      tasks.cleanup();
      await server.close();
    },
  };
  transport.onclose = () => {
    ended.abort();
    tasks.cleanup();
    if (sessionId !== undefined) hooks.onClosed(sessionId);
  };

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const tools = await listScopeTools(ctx, scope);
    return {
      tools: tools.map((t) => ({
        name: t.definition.name,
        title: toolTitle(t.definition.name),
        description: t.definition.description,
        inputSchema: t.definition.parameters as { type: 'object'; [key: string]: unknown },
        annotations: { title: toolTitle(t.definition.name), ...toolAnnotations(t) },
        ...(t.outputSchema === undefined ? {} : { outputSchema: t.outputSchema }),
        // A call that waits for a person fits the tasks extension; clients without it still call it plainly.
        ...(t.requiresApproval ? { execution: { taskSupport: 'optional' as const } } : {}),
      })),
    };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, task } = request.params;
    const loaded = await loadOrRefuse(ctx, scope, name);
    const traceparent = extra.requestInfo?.headers?.traceparent;
    const endUser = extra.requestInfo?.headers?.[END_USER_HEADER];
    const base = {
      ...endUserOf(endUser),
      ctx,
      settings,
      scope,
      keyId,
      name,
      arguments: request.params.arguments ?? {},
      loaded,
      traceparent: typeof traceparent === 'string' ? traceparent : undefined,
    };
    if (task !== undefined && extra.taskStore !== undefined) {
      const taskStore = extra.taskStore;
      const created = await taskStore.createTask({ ttl: extra.taskRequestedTtl ?? null, pollInterval: 1000 });
      const cancel = new AbortController();
      tasks.cancels.set(created.taskId, cancel);
      // The task waits as long as it takes a person to answer (or the approval expires, the task is
      // cancelled, the session ends); tasks/result then gives the call's result.
      void callMcpTool(
        { ...base, signal: AbortSignal.any([ended.signal, cancel.signal]), waitMs: undefined },
        hooks.onInternal,
      )
        .then(async (result: CallToolResult) => {
          if (!cancel.signal.aborted && !ended.signal.aborted) {
            await taskStore.storeTaskResult(created.taskId, 'completed', result);
          }
        })
        .catch(hooks.onInternal)
        .finally(() => tasks.cancels.delete(created.taskId));
      return { task: created };
    }
    const progressToken = request.params._meta?.progressToken;
    // Through the SDK's documented API, in the call's stream (relatedRequestId); never for a call answered as one
    // JSON body, whose transport carries nothing but the response.
    const elicitation: UrlElicitation | undefined =
      urlElicitation() && !transport.isPlain(extra.requestId)
        ? {
            ask: async (params, signal, timeout) =>
              (
                await server.elicitInput(
                  { mode: 'url', ...params },
                  { relatedRequestId: extra.requestId, signal, timeout },
                )
              ).action,
            complete: (elicitationId) =>
              server.createElicitationCompletionNotifier(elicitationId, { relatedRequestId: extra.requestId })(),
          }
        : undefined;
    return callTool(
      name,
      request.params.arguments,
      loaded,
      AbortSignal.any([ended.signal, extra.signal]),
      traceparent,
      endUser,
      progressToken === undefined
        ? undefined
        : async (approval, waitedMs) => {
            await extra.sendNotification({
              method: 'notifications/progress',
              params: {
                progressToken,
                progress: waitedMs / 1000,
                total: settings.approvalWaitMs / 1000,
                message: `Waiting for a person to answer approval ${approval.id} (mt approval-approve ${approval.id})`,
              },
            });
          },
      elicitation,
    );
  });
  return session;
}
