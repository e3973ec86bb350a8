import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type Dispatcher, Response as UndiciResponse, fetch as undiciFetch } from 'undici';
import { gatewayErrors } from '../errors.js';
import { isRedirect } from '../steps/redirect.js';

/** How long the DELETE that ends a session may take. */
const CLOSE_TIMEOUT_MS = 5_000;

/** What {@link guardedFetch} needs: the one origin the session talks to and how it reaches it. */
export interface GuardedFetchOptions {
  /** The configured URL: every request of the session goes to its origin and no other. */
  url: URL;
  /** The gateway's egress dispatcher: every connection judged by the egress policy, DNS pinned. */
  dispatcher: Dispatcher;
  /** Bytes one HTTP answer may carry before the session is failed. */
  maxBytes: number;
  /** The tool (or the listing) the session serves, for messages. */
  tool: string;
  /** Told when an answer ran over `maxBytes` (the session is broken: the call waiting on it fails at once). */
  onTooLarge: (error: Error) => void;
}

function refused(options: GuardedFetchOptions, target: URL | undefined): Error {
  return gatewayErrors.create('api:gateway:mcp-redirect-refused', {
    tool: options.tool,
    origin: options.url.origin,
    target: target === undefined ? 'an unreadable location' : target.origin,
  });
}

/** Counts the bytes of an answer's body and fails it past the limit. */
function capped(response: Response, options: GuardedFetchOptions): Response {
  const body = response.body;
  if (body === null) return response;
  let size = 0;
  const counter = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      size += chunk.byteLength;
      if (size > options.maxBytes) {
        const error = gatewayErrors.create('api:gateway:mcp-error', {
          tool: options.tool,
          host: options.url.host,
          operation: 'MCP',
          reason: `an answer was larger than ${options.maxBytes} bytes`,
        });
        options.onTooLarge(error);
        controller.error(error);
        return;
      }
      controller.enqueue(chunk);
    },
  });
  return new UndiciResponse(body.pipeThrough(counter) as never, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers as never,
  }) as unknown as Response;
}

/**
 * The `fetch` of an MCP session: undici's fetch on the gateway's egress dispatcher, so every connection is judged by
 * the egress policy exactly as an HTTP call's. A request goes only to the configured origin, and an answer that
 * redirects elsewhere fails the request (`api:gateway:mcp-redirect-refused`), so the credential, which is on every
 * request of the session, never leaves that origin; redirects within the origin are left to the SDK (at most 5,
 * method kept). The GET that would open the server's stream of notifications is answered 405 here: the gateway
 * wants no server-initiated messages, and the stream would hold a connection for the life of the session.
 */
export function guardedFetch(options: GuardedFetchOptions): FetchLike {
  const origin = options.url.origin;
  return async (input, init) => {
    const url = typeof input === 'string' ? new URL(input) : input;
    if (url.origin !== origin) throw refused(options, url);
    const method = (init?.method ?? 'GET').toUpperCase();
    if (method === 'GET') return new Response(null, { status: 405, statusText: 'Method Not Allowed' });
    let signal = init?.signal ?? undefined;
    if (method === 'DELETE') {
      const timeout = AbortSignal.timeout(CLOSE_TIMEOUT_MS);
      signal = signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
    }
    const response = (await undiciFetch(url, {
      ...(init as object),
      signal,
      redirect: 'manual',
      dispatcher: options.dispatcher,
    } as Parameters<typeof undiciFetch>[1])) as unknown as Response;
    if (isRedirect(response.status)) {
      const location = response.headers.get('location');
      let target: URL | undefined;
      try {
        target = location === null ? undefined : new URL(location, url);
      } catch {
        target = undefined;
      }
      if (target === undefined || target.origin !== origin) {
        await response.body?.cancel().catch(() => {});
        throw refused(options, target);
      }
      return response;
    }
    return capped(response, options);
  };
}
