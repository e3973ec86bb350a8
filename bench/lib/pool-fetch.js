// The MCP SDK client's transport `fetch` over an undici `Pool` (bench:calls' MCP row, bench/mcp-client.bench.js).
import { Readable } from 'node:stream';
import { Pool } from 'undici';

/**
 * A `fetch` for the SDK client's transport (its `fetch` option) over an undici `Pool`, the HTTP client the REST rows
 * use, so that the MCP row's client differs from REST's by the protocol (the SDK's `Client`, its zod checks, JSON-RPC)
 * and not by undici's WHATWG `fetch` (a `Request`, `Headers`, a web stream per body). A JSON answer is read whole into
 * a small object with what the transport reads of it; any other answer (an SSE stream) is a real `Response`.
 */
/** The read side of `Headers` over undici's response headers (lower-case names, a value or a list of values). */
class HeaderView {
  #raw;
  constructor(raw) {
    this.#raw = raw;
  }
  get(name) {
    const value = this.#raw[name.toLowerCase()];
    return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
  }
  has(name) {
    return this.#raw[name.toLowerCase()] !== undefined;
  }
  forEach(fn) {
    for (const name of Object.keys(this.#raw)) if (this.#raw[name] !== undefined) fn(this.get(name), name, this);
  }
}

export function poolFetch(origin) {
  const pool = new Pool(origin);
  const fetchLike = async (url, init = {}) => {
    // The transport passes its URL object and a `Headers`: read as they are, not copied first.
    const target = typeof url === 'string' ? new URL(url) : url;
    const headers = {};
    const given = init.headers instanceof Headers ? init.headers : new Headers(init.headers);
    given.forEach((value, name) => {
      headers[name] = value;
    });
    const res = await pool.request({
      path: target.pathname + target.search,
      method: init.method ?? 'GET',
      headers,
      body: init.body ?? null,
      signal: init.signal ?? undefined,
    });
    if ((res.headers['content-type'] ?? '').startsWith('application/json') || res.statusCode === 202) {
      // The transport reads a JSON answer's headers by `get` only (content-type, mcp-session-id): undici's headers
      // object (lower-case names) answers it without a `Headers` built a call.
      const common = {
        ok: res.statusCode >= 200 && res.statusCode < 300,
        status: res.statusCode,
        headers: new HeaderView(res.headers),
      };
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
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    return new Response(res.statusCode === 204 ? null : Readable.toWeb(res.body), {
      status: res.statusCode,
      headers: responseHeaders,
    });
  };
  return { fetch: fetchLike, close: () => pool.close() };
}
