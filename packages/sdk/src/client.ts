import { randomUUID } from 'node:crypto';
import { APIConnectionError, APIError, APITimeoutError } from './core/api-error.js';
import { isRetryableStatus, retryDelayMs, sleep } from './core/retry.js';
import { Agents } from './resources/agents.js';
import { Approvals } from './resources/approvals.js';
import { Connectors } from './resources/connectors.js';
import { FileSystems } from './resources/file-systems.js';
import { Deploys } from './resources/deploy.js';
import { Extops } from './resources/extops.js';
import { InteractionRuns } from './resources/interaction-runs.js';
import { Interactions } from './resources/interactions.js';
import { Audit } from './resources/audit.js';
import { Usage } from './resources/usage.js';
import { Webhooks } from './resources/webhooks.js';
import { Keys } from './resources/keys.js';
import { KnowledgeBases } from './resources/knowledge-bases.js';
import { Namespaces } from './resources/namespaces.js';
import { Secrets } from './resources/secrets.js';
import { AuthProviders } from './resources/auth-providers.js';
import { Schedules } from './resources/schedules.js';
import { Triggers } from './resources/triggers.js';
import { Connections } from './resources/connections.js';

/** How a {@link Maitento} client connects. */
export interface ClientOptions {
  /** The server, for example `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** The API key (`mt_...`), sent as `Authorization: Bearer`. */
  apiKey?: string;
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof fetch;
  /** Retries after a connection error, a timeout, 408, 429 or 5xx; default 2. */
  maxRetries?: number;
  /** Time limit of one attempt in milliseconds; default 60 000. */
  timeoutMs?: number;
}

/** Per-call options, the last argument of every resource method. */
export interface RequestOptions {
  /** Aborts the call (no retry after an abort). */
  signal?: AbortSignal;
  maxRetries?: number;
  timeoutMs?: number;
  /** The `Idempotency-Key` of a non-GET call; a fresh one is made per call when absent. */
  idempotencyKey?: string;
}

/** One request for {@link Maitento.request}. */
export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The path, built with the `path` template so its parameters are encoded. */
  path: string;
  body?: unknown;
  /** Sends `body` (bytes or text) as it is with this content type, instead of as JSON. */
  contentType?: string;
}

/** One request for {@link Maitento.requestRaw}: a body sent as it is, and headers of its own. */
export interface RawRequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The path, built with the `path` template so its parameters are encoded. */
  path: string;
  /** Sent as is (bytes or text), with the `content-type` of `headers`. */
  body?: Uint8Array | string;
  headers?: Record<string, string>;
}

const DEFAULT_TIMEOUT_MS = 60_000;

/** The Maitento API client; each resource is a namespace (`mt.connectors.list()`). */
export class Maitento {
  /** The server, without a trailing slash. */
  readonly baseUrl: string;
  readonly maxRetries: number;
  readonly timeoutMs: number;
  readonly deploy: Deploys;
  readonly connectors: Connectors;
  readonly extops: Extops;
  readonly secrets: Secrets;
  readonly authProviders: AuthProviders;
  readonly schedules: Schedules;
  readonly triggers: Triggers;
  readonly connections: Connections;
  readonly keys: Keys;
  readonly namespaces: Namespaces;
  readonly agents: Agents;
  readonly interactions: Interactions;
  readonly interactionRuns: InteractionRuns;
  readonly approvals: Approvals;
  readonly fileSystems: FileSystems;
  readonly knowledgeBases: KnowledgeBases;
  readonly audit: Audit;
  /** What the runs of the namespace spent: runs, tool calls, tokens and cost over a period (admin). */
  readonly usage: Usage;
  /** Outbound webhook endpoints, their secrets, test events and delivery logs (admin). */
  readonly webhooks: Webhooks;
  readonly #apiKey: string | undefined;
  readonly #fetch: typeof fetch;

  constructor(options: ClientOptions) {
    let base: URL;
    try {
      base = new URL(options.baseUrl);
    } catch {
      throw new TypeError(`baseUrl ${JSON.stringify(options.baseUrl)} is not a URL`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new TypeError(`baseUrl ${JSON.stringify(options.baseUrl)} must be http or https`);
    }
    this.baseUrl = base.toString().replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.maxRetries = options.maxRetries ?? 2;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.deploy = new Deploys(this);
    this.connectors = new Connectors(this);
    this.extops = new Extops(this);
    this.secrets = new Secrets(this);
    this.authProviders = new AuthProviders(this);
    this.schedules = new Schedules(this);
    this.triggers = new Triggers(this);
    this.connections = new Connections(this);
    this.keys = new Keys(this);
    this.namespaces = new Namespaces(this);
    this.agents = new Agents(this);
    this.interactions = new Interactions(this);
    this.interactionRuns = new InteractionRuns(this);
    this.approvals = new Approvals(this);
    this.fileSystems = new FileSystems(this);
    this.knowledgeBases = new KnowledgeBases(this);
    this.audit = new Audit(this);
    this.usage = new Usage(this);
    this.webhooks = new Webhooks(this);
  }

  /**
   * Sends one request and returns its parsed JSON (`undefined` for an empty answer), retrying
   * connection errors, timeouts, 408, 429 and 5xx with the same idempotency key.
   */
  async request<T>(spec: RequestSpec, options: RequestOptions = {}): Promise<T> {
    const headers: Record<string, string> = {};
    if (spec.body !== undefined) headers['content-type'] = spec.contentType ?? 'application/json';
    // A body with its own content type (a document's bytes or text) goes as it is; any other as JSON.
    const body =
      spec.body === undefined
        ? undefined
        : spec.contentType === undefined
          ? JSON.stringify(spec.body)
          : (spec.body as string | Uint8Array<ArrayBuffer>);
    const response = await this.requestRaw({ method: spec.method, path: spec.path, body, headers }, options);
    return (await readBody(response)) as T;
  }

  /**
   * Sends one request with a body as it is (a file's bytes) and resolves with the successful answer, its body
   * unread (bytes or text, as the caller wants it); retried and refused as {@link Maitento.request} is.
   */
  async requestRaw(spec: RawRequestSpec, options: RequestOptions = {}): Promise<Response> {
    const url = this.baseUrl + spec.path;
    const maxRetries = options.maxRetries ?? this.maxRetries;
    const headers: Record<string, string> = { accept: 'application/json', ...spec.headers };
    if (this.#apiKey !== undefined) headers.authorization = `Bearer ${this.#apiKey}`;
    if (spec.method !== 'GET') headers['idempotency-key'] = options.idempotencyKey ?? `mt-${randomUUID()}`;
    const body = spec.body;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await this.#attempt(url, { method: spec.method, headers, body }, options);
      } catch (error) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (attempt < maxRetries) {
          await sleep(retryDelayMs(attempt + 1, undefined), options.signal);
          continue;
        }
        throw error;
      }
      if (response.ok) return response;
      if (isRetryableStatus(response.status) && attempt < maxRetries) {
        await response.body?.cancel();
        await sleep(retryDelayMs(attempt + 1, response.headers), options.signal);
        continue;
      }
      throw APIError.fromResponse(response.status, await readBody(response), response.headers, {
        method: spec.method,
        url,
      });
    }
  }

  /**
   * Opens a streaming GET (Server-Sent Events) and resolves with the answer once its headers are in
   * (within `timeoutMs`); the body is left to the caller. An error status rejects with the matching
   * `APIError`, no answer with `APIConnectionError`. Not retried here: the caller reconnects.
   */
  async openStream(path: string, options: { lastEventId?: string; signal?: AbortSignal; timeoutMs?: number } = {}) {
    const url = this.baseUrl + path;
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (this.#apiKey !== undefined) headers.authorization = `Bearer ${this.#apiKey}`;
    if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onAbort = () => controller.abort();
    if (options.signal?.aborted) controller.abort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let response: Response;
    try {
      response = await this.#fetch(url, { method: 'GET', headers, signal: controller.signal });
    } catch (error) {
      options.signal?.removeEventListener('abort', onAbort);
      if (options.signal?.aborted) throw options.signal.reason;
      if (timedOut) throw new APITimeoutError(url, timeoutMs);
      throw new APIConnectionError(url, error);
    } finally {
      clearTimeout(timer);
    }
    if (!response.ok) {
      options.signal?.removeEventListener('abort', onAbort);
      throw APIError.fromResponse(response.status, await readBody(response), response.headers, { method: 'GET', url });
    }
    return {
      response,
      close: () => {
        options.signal?.removeEventListener('abort', onAbort);
        controller.abort();
      },
    };
  }

  async #attempt(url: string, init: RequestInit, options: RequestOptions): Promise<Response> {
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    const onAbort = () => controller.abort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await this.#fetch(url, { ...init, signal: controller.signal });
      // The body is read here so that a server stalling mid-body also counts against the time limit; as bytes,
      // so a file's content comes through unchanged.
      const bytes = await response.arrayBuffer();
      const status = response.status;
      // A 204 or 304 answer may not carry a body.
      const empty = bytes.byteLength === 0 || status === 204 || status === 304;
      // The copy is made with the answer's own class: a `fetch` given in the options may answer with a class of its
      // own (the `mt` CLI's, on node:http), and Node.js's `Response` is then never loaded (its undici costs a command
      // ~0.12 s of CPU). The global `fetch` answers a `Response`, so that is what its callers get, as before.
      const Answer =
        typeof response.constructor === 'function' && response.constructor !== Object
          ? (response.constructor as typeof Response)
          : Response;
      return new Answer(empty ? null : bytes, { status, headers: response.headers });
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (controller.signal.aborted) throw new APITimeoutError(url, timeoutMs);
      throw new APIConnectionError(url, error);
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    }
  }
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
