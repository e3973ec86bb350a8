import type { IncomingHttpHeaders } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  isJSONRPCErrorResponse,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';

const closedAnswer = (id: RequestId, message: string): JSONRPCMessage => ({
  jsonrpc: '2.0',
  id,
  error: { code: ErrorCode.ConnectionClosed, message },
});

const inFlightAnswer = (id: RequestId): JSONRPCMessage => ({
  jsonrpc: '2.0',
  id,
  error: { code: ErrorCode.InvalidRequest, message: `Request id ${String(id)} is already in flight` },
});

/** The answer to a request taken by {@link SessionTransport.answer}: one JSON-RPC response. */
type Answer = (response: JSONRPCMessage) => void;

/**
 * A `tools/call` that needs no stream: one JSON-RPC request object (not a batch), without `task` (the tasks
 * extension answers later) and without `_meta.progressToken` (nothing to send before the result), from a client
 * that accepts `application/json` and speaks a protocol version the SDK's transport accepts (else that transport
 * answers it, and refuses it as it always did). Maitento's server sends no other message related to such a request
 * (no sampling or logging; a URL elicitation only over a stream: the session hands such a call to the SDK's
 * transport), so such a call's only message is its response (docs/mcp.md).
 */
export function isPlainToolCall(body: unknown, headers: IncomingHttpHeaders): body is JSONRPCRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const message = body as { jsonrpc?: unknown; method?: unknown; id?: unknown; params?: unknown };
  if (message.jsonrpc !== '2.0' || message.method !== 'tools/call') return false;
  if (typeof message.id !== 'string' && typeof message.id !== 'number') return false;
  const params = message.params as { task?: unknown; _meta?: { progressToken?: unknown } } | undefined;
  if (typeof params !== 'object' || params === null || params.task !== undefined) return false;
  if (params._meta?.progressToken !== undefined) return false;
  if (!headers.accept?.includes('application/json')) return false;
  const version = headers['mcp-protocol-version'];
  return version === undefined || (typeof version === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(version));
}

/**
 * The transport of one session's SDK `Server`: the SDK's Streamable HTTP transport for every request (initialize,
 * tools/list, the GET stream of notifications, DELETE, task requests, calls that may send progress), plus
 * {@link answer} for a plain `tools/call`, handed to the same `Server` and answered with one JSON body instead of
 * an SSE stream through the SDK's Node-to-web conversion (docs/decisions/0032-mcp-plain-tools-call-answered-as-json.md).
 * One `Server`, so one set of handlers, one request-id space, cancellation (`notifications/cancelled`) and the
 * session's close apply to both paths alike.
 */
export class SessionTransport implements Transport {
  readonly http: StreamableHTTPServerTransport;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  // The requests taken by `answer`, by JSON-RPC id, until the Server sends their response.
  private readonly waiting = new Map<RequestId, Answer>();
  // The plain calls run by `direct` (outside the Server), by JSON-RPC id: aborted by the client's
  // `notifications/cancelled` for that id, or when the session ends.
  private readonly direct = new Map<RequestId, AbortController>();
  private closed = false;

  constructor(options: ConstructorParameters<typeof StreamableHTTPServerTransport>[0]) {
    this.http = new StreamableHTTPServerTransport(options);
    this.http.onmessage = (message, extra) => {
      // A cancellation of a call run directly stops it here; the Server gets the notification too (and finds
      // nothing of its own to cancel).
      if ('method' in message && message.method === 'notifications/cancelled' && this.direct.size > 0) {
        const requestId = (message.params as { requestId?: RequestId } | undefined)?.requestId;
        if (requestId !== undefined) this.direct.get(requestId)?.abort();
      }
      this.onmessage?.(message, extra);
    };
    this.http.onerror = (error) => this.onerror?.(error);
    this.http.onclose = () => {
      this.closed = true;
      for (const controller of this.direct.values()) controller.abort();
      this.direct.clear();
      // Calls still running when the session ends get the error a closed connection gives (the Server aborts them).
      for (const [id, answer] of this.waiting) answer(closedAnswer(id, 'Connection closed'));
      this.waiting.clear();
      this.onclose?.();
    };
  }

  get sessionId(): string | undefined {
    return this.http.sessionId;
  }

  start(): Promise<void> {
    return this.http.start();
  }

  close(): Promise<void> {
    return this.http.close();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    // Looked up before any schema check: most messages of a session belong to no plain call.
    const id = 'method' in message ? options?.relatedRequestId : (message as { id?: RequestId }).id;
    const answer = id === undefined ? undefined : this.waiting.get(id);
    if (answer === undefined) return this.http.send(message, options);
    // A plain call sends nothing but its response (see isPlainToolCall); anything else related to it is dropped,
    // as the SDK's transport drops it in its JSON-response mode.
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      this.waiting.delete(id as RequestId);
      answer(message);
    }
  }

  /** Whether request `id` is answered as one JSON body (see {@link answer}): nothing else can be sent for it. */
  isPlain(id: RequestId): boolean {
    return this.waiting.has(id);
  }

  /**
   * Hands a plain `tools/call` (see {@link isPlainToolCall}) to the session's Server; resolves with its response.
   * A request whose id is already in flight in this session is refused, as a JSON-RPC error, without running it.
   */
  answer(request: JSONRPCRequest, headers: IncomingHttpHeaders): Promise<JSONRPCMessage> {
    if (this.closed) return Promise.resolve(closedAnswer(request.id, 'Connection closed'));
    if (this.waiting.has(request.id)) return Promise.resolve(inFlightAnswer(request.id));
    return new Promise((resolve) => {
      this.waiting.set(request.id, resolve);
      this.onmessage?.(request, { requestInfo: { headers } });
    });
  }

  /**
   * Runs a plain `tools/call` without the Server (the route's fast path,
   * docs/decisions/0033-mcp-plain-tools-call-run-directly.md): `run` gets a signal that ends when the client cancels this id or the session ends, and
   * resolves with the response. The same request-id space, refusals and close as {@link answer}: an id in flight is
   * refused, a closed session answers "Connection closed" (at once, also for calls still running), and a cancelled
   * call gets no response (its HTTP exchange ends when the client closes it, through {@link forget}).
   */
  run(id: RequestId, run: (signal: AbortSignal) => Promise<JSONRPCMessage>): Promise<JSONRPCMessage> {
    if (this.closed) return Promise.resolve(closedAnswer(id, 'Connection closed'));
    if (this.waiting.has(id)) return Promise.resolve(inFlightAnswer(id));
    const controller = new AbortController();
    this.direct.set(id, controller);
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      const settle = (response: JSONRPCMessage) => {
        if (this.direct.get(id) === controller) this.direct.delete(id);
        if (controller.signal.aborted || this.waiting.get(id) !== resolve) return;
        this.waiting.delete(id);
        resolve(response);
      };
      run(controller.signal).then(settle, (error: unknown) =>
        settle({
          jsonrpc: '2.0',
          id,
          error: { code: ErrorCode.InternalError, message: error instanceof Error ? error.message : 'Internal error' },
        }),
      );
    });
  }

  /** Forgets a plain call whose HTTP exchange ended before its answer (the client went away, or cancelled it). */
  forget(id: RequestId): void {
    const answer = this.waiting.get(id);
    this.waiting.delete(id);
    // Settles the route's wait; nobody reads this answer (the HTTP exchange is over).
    answer?.(closedAnswer(id, 'Request closed'));
  }
}
