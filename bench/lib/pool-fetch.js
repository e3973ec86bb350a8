// The MCP SDK client's transport `fetch` over an undici `Pool` (bench:calls' MCP row, bench/mcp-client.bench.js).
import { Readable } from 'node:stream';
import { Pool } from 'undici';

/**
 * A `fetch` for the SDK client's transport (its `fetch` option) over an undici `Pool`, the HTTP client the REST rows
 * use, so that the MCP row's client differs from REST's by the protocol (the SDK's `Client`, its zod checks, JSON-RPC)
 * and not by undici's WHATWG `fetch` (a `Request`, `Headers`, a web stream per body). A JSON answer is read whole into
 * a small object with what the transport reads of it; any other answer (an SSE stream) is a real `Response`.
 */
export function poolFetch(origin) {
  const pool = new Pool(origin);
  const fetchLike = async (url, init = {}) => {
    const target = new URL(url);
    const headers = {};
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const res = await pool.request({
      path: target.pathname + target.search,
      method: init.method ?? 'GET',
      headers,
      body: init.body ?? null,
      signal: init.signal ?? undefined,
    });
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const common = {
      ok: res.statusCode >= 200 && res.statusCode < 300,
      status: res.statusCode,
      headers: responseHeaders,
    };
    if ((res.headers['content-type'] ?? '').startsWith('application/json') || res.statusCode === 202) {
      const text = await res.body.text();
      const body = { cancel: async () => {} };
      return {
        ...common,
        statusText: '',
        url: String(url),
        type: 'basic',
        redirected: false,
        body,
        text: async () => text,
        json: async () => JSON.parse(text),
      };
    }
    return new Response(res.statusCode === 204 ? null : Readable.toWeb(res.body), {
      status: res.statusCode,
      headers: responseHeaders,
    });
  };
  return { fetch: fetchLike, close: () => pool.close() };
}
