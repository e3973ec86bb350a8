import type { IncomingHttpHeaders, IncomingMessage, RequestOptions } from 'node:http';
import { Readable } from 'node:stream';

// The `fetch` the CLI's commands give the SDK: one request on node:http (node:https for an https URL), its answer in a
// class of the same shape as the subset of `Response` the SDK reads. Node.js's own `fetch`, `Response` and `Headers`
// load its bundled undici on first use, ~0.12-0.15 s of CPU in every command that calls the server (about a third of a
// command's start, docs/performance.md at 3251c0c "The test suite's processes"); node:http is already in the startup snapshot's
// reach and costs a few ms. Only what the SDK's client uses is here: method, headers, a string or byte body, an abort
// signal; the answer's status, headers, and body as bytes, text, JSON or a web stream (Server-Sent Events).

/** The answer's headers, read-only, names lower case (what the SDK reads with `get`). */
export class HttpHeaders {
  readonly #values = new Map<string, string>();

  constructor(init?: IncomingHttpHeaders | Iterable<[string, string]> | Record<string, string> | HttpHeaders) {
    if (init === undefined) return;
    const entries: Iterable<[string, unknown]> =
      init instanceof HttpHeaders || Symbol.iterator in init
        ? (init as Iterable<[string, string]>)
        : Object.entries(init as Record<string, unknown>);
    for (const [name, value] of entries) {
      if (value === undefined) continue;
      this.#values.set(name.toLowerCase(), Array.isArray(value) ? value.join(', ') : String(value));
    }
  }

  get(name: string): string | null {
    return this.#values.get(name.toLowerCase()) ?? null;
  }

  has(name: string): boolean {
    return this.#values.has(name.toLowerCase());
  }

  forEach(callback: (value: string, name: string) => void): void {
    for (const [name, value] of this.#values) callback(value, name);
  }

  entries(): IterableIterator<[string, string]> {
    return this.#values.entries();
  }

  keys(): IterableIterator<string> {
    return this.#values.keys();
  }

  values(): IterableIterator<string> {
    return this.#values.values();
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.#values.entries();
  }
}

type Body = Uint8Array | IncomingMessage | null;

/**
 * An answer: its body either still streaming from the socket (what `httpFetch` returns) or bytes (what the SDK makes
 * with `new (answer.constructor)(bytes, { status, headers })` once it has read them).
 */
export class HttpResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: HttpHeaders;
  readonly ok: boolean;
  #body: Body;
  #used = false;

  constructor(
    body?: ArrayBuffer | Uint8Array | string | IncomingMessage | null,
    init: { status?: number; statusText?: string; headers?: HttpHeaders | Record<string, string> } = {},
  ) {
    this.status = init.status ?? 200;
    this.statusText = init.statusText ?? '';
    this.ok = this.status >= 200 && this.status < 300;
    this.headers = init.headers instanceof HttpHeaders ? init.headers : new HttpHeaders(init.headers);
    this.#body =
      body === undefined || body === null
        ? null
        : typeof body === 'string'
          ? Buffer.from(body)
          : body instanceof ArrayBuffer
            ? new Uint8Array(body)
            : body;
  }

  get bodyUsed(): boolean {
    return this.#used;
  }

  /** The body as a web stream (the SDK reads Server-Sent Events from it), or null when there is none. */
  get body(): ReadableStream<Uint8Array> | null {
    const body = this.#body;
    if (body === null) return null;
    this.#used = true;
    if (body instanceof Uint8Array) {
      return new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(body);
          controller.close();
        },
      });
    }
    return Readable.toWeb(body) as ReadableStream<Uint8Array>;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.#bytes();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async bytes(): Promise<Uint8Array> {
    return new Uint8Array(await this.arrayBuffer());
  }

  async text(): Promise<string> {
    return Buffer.from(await this.#bytes()).toString('utf8');
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  async #bytes(): Promise<Uint8Array> {
    if (this.#used) throw new TypeError('the body was already read');
    this.#used = true;
    const body = this.#body;
    if (body === null) return new Uint8Array(0);
    if (body instanceof Uint8Array) return body;
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }
}

/** The `init` the SDK passes: a method, plain headers, a string or bytes body, an abort signal. */
export interface HttpFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array | null;
  signal?: AbortSignal | null;
}

/**
 * A `fetch` for the SDK's client on node:http: resolves with the answer once its headers are in, its body left on the
 * socket; rejects with the socket's error (ECONNREFUSED and the like, which the SDK names) or the signal's reason.
 */
export async function httpFetch(input: string | URL, init: HttpFetchInit = {}): Promise<HttpResponse> {
  const url = new URL(String(input));
  // process.getBuiltinModule, not `import`: an ES module import of node:http/https reads every export, and their
  // `WebSocket`, `CloseEvent` and `MessageEvent` getters load undici, the very cost this module is here to spare.
  const request =
    url.protocol === 'https:'
      ? process.getBuiltinModule('node:https').request
      : url.protocol === 'http:'
        ? process.getBuiltinModule('node:http').request
        : undefined;
  if (request === undefined) throw new TypeError(`unsupported protocol ${url.protocol}`);
  const body = init.body ?? undefined;
  const headers: Record<string, string> = { ...init.headers };
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length'))
    headers['content-length'] = String(Buffer.byteLength(body));
  const options: RequestOptions = { method: init.method ?? 'GET', headers, signal: init.signal ?? undefined };
  return new Promise<HttpResponse>((resolve, reject) => {
    const req = request(url, options, (res: IncomingMessage) => {
      resolve(
        new HttpResponse(res, {
          status: res.statusCode ?? 0,
          statusText: res.statusMessage ?? '',
          headers: new HttpHeaders(res.headers),
        }),
      );
    });
    req.on('error', (error) => reject(init.signal?.aborted ? init.signal.reason : error));
    req.end(body);
  });
}
