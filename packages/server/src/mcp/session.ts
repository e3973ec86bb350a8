import { randomUUID } from 'node:crypto';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  type CallToolResult,
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { isMtError } from '@maitento/errors';
import type { ServerContext } from '../internal/context.js';
import { callMcpTool } from './call-tool.js';
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
  const session: McpSession = {
    transport,
    server,
    scope,
    keyId,
    endpoint,
    lastUsed: Date.now(),
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
    const base = {
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
    return callMcpTool(
      {
        ...base,
        signal: AbortSignal.any([ended.signal, extra.signal]),
        waitMs: settings.approvalWaitMs,
        ...(progressToken === undefined
          ? {}
          : {
              onWaiting: async (approval, waitedMs) => {
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
            }),
      },
      hooks.onInternal,
    );
  });
  return session;
}
