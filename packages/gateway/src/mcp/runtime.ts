import { addressBlockedError } from '@maitento/egress';
import type { Json, JsonSchema } from '@maitento/lang';
import type { Dispatcher } from 'undici';
import { gatewayErrors } from '../errors.js';
import type { Assembled } from '../gateway/assemble.js';
import type { ResolvedOptions } from '../gateway/options.js';
import type {
  McpListOptions,
  McpToolInfo,
  PreparedRequest,
  PreparedRequestView,
  ToolCallInput,
  ToolCallResult,
} from '../gateway/types.js';
import { abortable, startDeadline, timedOut } from '../internal/deadline.js';
import { headerAuth, type ResolvedAuth } from '../steps/auth.js';
import type { Authorizer } from '../steps/egress.js';
import { createRedactor, type Redactor, redactJson } from '../steps/redact.js';
import { classifyMcpError, httpStatusOf } from './classify.js';
import { type McpCallResult, shapeMcpResult } from './result.js';
import { closeSession, type McpSession, openSession, SessionPool } from './session.js';
import { loadedSdk } from './sdk.js';

/** Tools a listing gathers at most, over all its pages. */
const MAX_LISTED_TOOLS = 1_000;

/** The headers an MCP request is shown (and hashed for approvals) with, besides the credential. */
const VIEW_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'user-agent': 'Maitento/0.1',
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
});

/** What the MCP side of the gateway shares with the HTTP side. */
export interface McpContext {
  options: ResolvedOptions;
  dispatcher: Dispatcher;
  authorize: Authorizer;
}

/** One `tools/call` ready to send. */
interface McpRequest {
  url: URL;
  tool: string;
  arguments: { [key: string]: Json };
  auth: ResolvedAuth | undefined;
  redact: Redactor;
}

function parseTarget(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw addressBlockedError(text);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw addressBlockedError(text);
  url.hash = '';
  return url;
}

function isPlainObject(value: unknown): value is { [key: string]: Json } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The MCP half of the gateway: listings, calls over pooled sessions, prepared views. */
export function createMcpRuntime(ctx: McpContext) {
  const pool = new SessionPool(ctx);
  const { options } = ctx;

  /** The assembled call as a `tools/call`: its body is the arguments; the address is judged as an HTTP call's. */
  function requestOf(call: Assembled, input: ToolCallInput): McpRequest {
    const mcp = input.connector.mcp;
    if (mcp === undefined) throw new Error('not an MCP connector');
    // A platform token is for the platform's own API: an MCP connector never carries one (the compiler refuses it).
    if (call.auth?.platform === true) throw addressBlockedError(call.plan.connector.template.hostname);
    const args = call.bodyJson ?? {};
    if (!isPlainObject(args)) {
      throw gatewayErrors.create('api:gateway:request-invalid', {
        tool: call.plan.tool.name,
        problems: 'the arguments of an MCP tool must be a JSON object',
      });
    }
    return { url: parseTarget(mcp.url), tool: mcp.tool, arguments: args, auth: call.auth, redact: call.redact };
  }

  function viewOf(request: McpRequest): PreparedRequestView {
    const headers: Record<string, string> = { ...VIEW_HEADERS };
    if (request.auth !== undefined) headers[request.auth.header] = request.redact(request.auth.value);
    return {
      method: 'POST',
      url: request.redact(request.url.href),
      headers,
      body: redactJson({ tool: request.tool, arguments: request.arguments }, request.redact),
    };
  }

  function callOn(session: McpSession, request: McpRequest, deadline: AbortSignal) {
    return whileInFlight(deadline, (signal) =>
      Promise.race([
        session.client.callTool({ name: request.tool, arguments: request.arguments }, undefined, {
          signal,
          // The deadline ends the call; the SDK's own timeout only backs it up.
          timeout: options.timeoutMs + 1_000,
        }),
        session.broken,
      ]),
    );
  }

  return {
    /** Every step but sending: the view covers the URL, the remote tool and the arguments (hashed for approvals). */
    async prepare(
      call: Assembled,
      input: ToolCallInput,
      deadline: AbortSignal,
    ): Promise<Omit<PreparedRequest, 'hash'>> {
      const request = requestOf(call, input);
      await ctx.authorize(request.url, deadline);
      const headers: Record<string, string> = { ...VIEW_HEADERS };
      if (request.auth !== undefined) headers[request.auth.header] = request.auth.value;
      return {
        prepared: true,
        method: 'POST',
        url: request.url,
        headers,
        body: JSON.stringify({ tool: request.tool, arguments: request.arguments }),
        view: viewOf(request),
      };
    },

    /**
     * One `tools/call` on a pooled session. A session that cannot be opened for a network reason is tried once more
     * (nothing was sent); a reused session the server no longer knows (HTTP 404, which the protocol answers before
     * handling the request) is dropped and the call made once on a new one; a `tools/call` is never sent twice
     * otherwise. Never rejects.
     */
    async send(
      call: Assembled,
      input: ToolCallInput,
      deadline: AbortSignal,
      failure: (error: unknown) => ToolCallResult,
    ): Promise<ToolCallResult> {
      const tool = call.plan.tool.name;
      let request: McpRequest | undefined;
      try {
        request = requestOf(call, input);
        await ctx.authorize(request.url, deadline);
      } catch (error) {
        return failure(error);
      }
      input.onSend?.();
      const failed = (error: unknown, operation: 'initialize' | 'tools/call') => {
        const mtError = classifyMcpError(error, {
          tool,
          host: request.url.host,
          operation,
          timedOut: timedOut(deadline, input.signal),
          cancelled: input.signal?.aborted === true,
          timeoutMs: options.timeoutMs,
          redact: request.redact,
        });
        const result = failure(mtError);
        // The server refused the credential (before handling the request): an OAuth2 caller refreshes the token and
        // calls once more, as after an HTTP call's 401.
        return httpStatusOf(error) === 401 ? { ...result, status: 401 } : result;
      };
      for (let attempt = 0; ; attempt++) {
        let session: McpSession;
        try {
          session = await pool.lease(request.url, request.auth, tool, deadline);
        } catch (error) {
          const retry = attempt === 0 && !deadline.aborted && isNetworkFailure(error);
          if (retry) continue;
          return failed(error, 'initialize');
        }
        try {
          const result = await callOn(session, request, deadline);
          pool.release(session);
          return shapeMcpResult(
            result as McpCallResult,
            { tool, remote: request.tool },
            options.maxResponseBytes,
            request.redact,
          );
        } catch (error) {
          const sdk = loadedSdk();
          const rpcError = sdk !== undefined && error instanceof sdk.McpError && !deadline.aborted;
          if (deadline.aborted) pool.retire(session);
          else if (rpcError) pool.release(session);
          else pool.drop(session);
          const stale = attempt === 0 && session.uses > 0 && httpStatusOf(error) === 404 && !deadline.aborted;
          if (stale) continue;
          return failed(error, 'tools/call');
        }
      }
    },

    async list(target: { url: string }, listOptions: McpListOptions | undefined): Promise<McpToolInfo[]> {
      const timer = startDeadline(options.timeoutMs, listOptions?.signal);
      const deadline = timer.signal;
      const credential = listOptions?.credential;
      const auth = credential === undefined ? undefined : headerAuth(credential);
      const redact = createRedactor(auth?.secrets ?? []);
      let host = '(unknown)';
      let operation: 'initialize' | 'tools/list' = 'initialize';
      let session: McpSession | undefined;
      let opening: Promise<McpSession> | undefined;
      try {
        const url = parseTarget(target.url);
        host = url.host;
        await ctx.authorize(url, deadline);
        opening = openSession(ctx, url, auth, `the listing of ${url.host}`);
        session = await abortable(opening, deadline);
        operation = 'tools/list';
        const tools: McpToolInfo[] = [];
        const seen = new Set<string>();
        let cursor: string | undefined;
        for (;;) {
          const page = await listPage(session, cursor, deadline, options.timeoutMs);
          for (const tool of page.tools) {
            if (tools.length >= MAX_LISTED_TOOLS) {
              throw new Error(`the server lists more than ${MAX_LISTED_TOOLS} tools`);
            }
            const info: McpToolInfo = { name: tool.name, inputSchema: tool.inputSchema as JsonSchema };
            if (typeof tool.description === 'string') info.description = tool.description;
            tools.push(info);
          }
          cursor = page.nextCursor;
          if (cursor === undefined) return tools;
          if (seen.has(cursor)) throw new Error('the server gave the same page cursor twice');
          seen.add(cursor);
        }
      } catch (error) {
        throw classifyMcpError(error, {
          tool: host,
          host,
          operation,
          timedOut: timedOut(deadline, listOptions?.signal),
          cancelled: listOptions?.signal?.aborted === true,
          timeoutMs: options.timeoutMs,
          redact,
        });
      } finally {
        timer.end();
        // Ended in the background (the DELETE is bounded to 5 s): the listing is not held up by a slow server.
        // A session still opening when the deadline passed is closed once it is open.
        if (session !== undefined) void closeSession(session);
        else opening?.then(closeSession, () => {});
      }
    },

    close(): Promise<void> {
      return pool.closeAll();
    },
  };
}

function listPage(session: McpSession, cursor: string | undefined, deadline: AbortSignal, timeoutMs: number) {
  return whileInFlight(deadline, (signal) =>
    Promise.race([
      session.client.listTools(cursor === undefined ? undefined : { cursor }, { signal, timeout: timeoutMs + 1_000 }),
      session.broken,
    ]),
  );
}

/**
 * Runs one SDK request with a signal that follows the deadline only while the request is in flight. The SDK never
 * removes its abort listener, so handing it the deadline itself would send `notifications/cancelled` for a request
 * that was answered long before, once the deadline passes.
 */
async function whileInFlight<T>(deadline: AbortSignal, request: (signal: AbortSignal) => Promise<T>): Promise<T> {
  deadline.throwIfAborted();
  const controller = new AbortController();
  const onAbort = () => controller.abort(deadline.reason);
  deadline.addEventListener('abort', onAbort, { once: true });
  try {
    return await request(controller.signal);
  } finally {
    deadline.removeEventListener('abort', onAbort);
  }
}

function isNetworkFailure(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  if (typeof code === 'string' && code.startsWith('api:')) return false;
  let current = error;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    const c = (current as { code?: unknown }).code;
    // A kept-alive connection the server closed: the next connection may well work.
    if (c === 'ECONNRESET' || c === 'UND_ERR_SOCKET' || c === 'EPIPE') return true;
    if (typeof c === 'string' && c.startsWith('api:')) return false;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
