import { addressBlockedError } from '@maitento/egress';
import type { Dispatcher } from 'undici';
import { gatewayErrors } from '../errors.js';
import { timedOut } from '../internal/deadline.js';
import type { ReadBody } from '../steps/read-body.js';
import type { Authorizer } from '../steps/egress.js';
import { credentialAllowed, nextHop } from '../steps/redirect.js';
import { flattenHeaders, shapeResult } from '../steps/shape-result.js';
import { type Assembled, BASE_HEADERS } from './assemble.js';
import { sendHop } from './hop.js';
import type { ResolvedOptions } from './options.js';
import type { ToolCallInput, ToolCallResult } from './types.js';

/** What sending needs besides the call itself. */
export interface SendContext {
  options: ResolvedOptions;
  dispatcher: Dispatcher;
  /** Used only for `auth = "Maitento"` calls to the platform's origin. */
  platformDispatcher: () => Dispatcher;
  authorize: Authorizer;
  /** The result for an error thrown while calling (timeouts, refusals, unreachable hosts). */
  failure: (error: unknown, call: Assembled, timedOut: boolean, input: ToolCallInput) => ToolCallResult;
}

/** The headers of one hop: without body headers after a change to GET, with the credential only where it may go. */
function hopHeaders(call: Assembled, dropBody: boolean, credential: boolean): Readonly<Record<string, string>> {
  const auth = call.auth;
  // A call sharing the base headers differs from the last one only by its credential: that object is reused.
  const shared = !dropBody && credential && auth !== undefined && call.headers === BASE_HEADERS;
  if (shared) {
    const memo = call.plan.credentialHeaders;
    if (memo !== undefined && memo.header === auth.header && memo.value === auth.value) return memo.headers;
  }
  const headers: Record<string, string> = {};
  for (const name in call.headers) {
    if (dropBody && (name === 'content-type' || name === 'idempotency-key')) continue;
    headers[name] = call.headers[name];
  }
  if (credential && auth !== undefined) headers[auth.header] = auth.value;
  if (shared) call.plan.credentialHeaders = { header: auth.header, value: auth.value, headers: Object.freeze(headers) };
  return headers;
}

/**
 * Steps 6-10 on the wire: dispatch, follow redirects by hand, read the body under the deadline, shape the result.
 * Never rejects: an error becomes `ctx.failure`'s result.
 */
export async function send(
  call: Assembled,
  ctx: SendContext,
  deadline: AbortSignal,
  input: ToolCallInput,
): Promise<ToolCallResult> {
  try {
    const { options } = ctx;
    const template = call.plan.connector.template;
    const toolName = call.plan.tool.name;
    const platform = call.auth?.platform === true;
    const dispatcher = platform ? ctx.platformDispatcher() : ctx.dispatcher;
    // The first request goes to the configured origin; a URL object is made only when a redirect needs one.
    let url: URL | undefined;
    let origin = call.origin;
    let path = call.path;
    let method = call.method;
    let body = call.body;
    let downgraded = false;
    input.onSend?.();
    for (let hops = 0; ; hops++) {
      const dropBody = body === undefined && call.body !== undefined;
      const credential = call.auth !== undefined && (url === undefined || credentialAllowed(url, template, downgraded));
      const headers = dropBody || credential ? hopHeaders(call, dropBody, credential) : call.headers;
      const response = await sendHop(
        dispatcher,
        {
          origin,
          path,
          method: method as Dispatcher.HttpMethod,
          headers,
          body,
          headersTimeout: options.timeoutMs,
          bodyTimeout: options.timeoutMs,
        },
        deadline,
        options.maxResponseBytes,
        toolName,
      );
      const location = response.location;
      if (location !== undefined) {
        const current = url ?? new URL(origin + path);
        if (hops >= options.maxRedirects) {
          throw gatewayErrors.create('api:gateway:too-many-redirects', {
            tool: toolName,
            max: options.maxRedirects,
            url: call.redact(current.href),
          });
        }
        const hop = nextHop(response.statusCode, location, current, method, body);
        if (hop === undefined) {
          throw gatewayErrors.create('api:gateway:upstream-unreachable', {
            tool: toolName,
            host: current.host,
            reason: 'it redirected to a location that is not an http(s) URL',
          });
        }
        if (current.protocol === 'https:' && hop.url.protocol === 'http:') downgraded = true;
        if (platform) {
          if (hop.url.origin !== options.platformOrigin) throw addressBlockedError(hop.url.hostname);
        } else {
          // Under the deadline like the first lookup: a hop's name may belong to a DNS server that never answers.
          await ctx.authorize(hop.url, deadline);
        }
        url = hop.url;
        origin = url.origin;
        path = `${url.pathname}${url.search}`;
        method = hop.method;
        body = hop.body;
        continue;
      }
      const headersOut = flattenHeaders(response.headers, call.redact);
      const read = response.read as ReadBody;
      return shapeResult(call.plan, response.statusCode, headersOut, read, call.redact);
    }
  } catch (error) {
    return ctx.failure(error, call, timedOut(deadline, input.signal), input);
  }
}
