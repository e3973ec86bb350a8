import type { EgressPolicy, Resolver } from '@maitento/egress';
import type { MtError } from '@maitento/errors';
import type { Connector, FunctionBinding, Json, JsonSchema, Tool } from '@maitento/lang';
import type { Dispatcher } from 'undici';

/** What `platform.token` is told about the call it signs. */
export interface PlatformTokenContext {
  tool: Tool;
  connector: Connector;
  /** Whom the call is made for, as the caller passed it in {@link ToolCallInput.caller} (a namespace, say). */
  caller?: string;
}

/** Options of {@link createGateway}; everything but `policy` has a default. */
export interface GatewayOptions {
  /** The egress policy every address is judged by. */
  policy: EgressPolicy;
  /** Name resolution (defaults to the system resolver of `@maitento/egress`). */
  resolver?: Resolver;
  /** Sends requests; by default an egress agent that connects only to checked addresses. One you pass must do that itself. */
  dispatcher?: Dispatcher;
  /** One deadline for connecting, every redirect hop and reading the body (default 100 000 ms). */
  timeoutMs?: number;
  /** Decoded body bytes kept before the body is cut (default 100 000). */
  maxResponseBytes?: number;
  /** Redirects followed before the call is stopped (default 5). */
  maxRedirects?: number;
  /** The platform's own API, the only place `auth = "Maitento"` connectors may call, and how to sign for it. */
  platform?: { origin: string; token: (ctx: PlatformTokenContext) => Promise<string> };
  /** Extra trust for TLS (a test CA, a private CA). */
  tls?: { ca?: string | Buffer };
  /**
   * Told of every unexpected error (a bug, a failed assertion) with its stack, for the operator's log; the
   * call's result is then `api:gateway:internal` without it. Never given a secret's value on purpose, but the
   * error is whatever was thrown: log it where secrets are redacted.
   */
  onInternalError?: (error: unknown, context: { tool: string; runId?: string }) => void;
  /**
   * Admits calls of tools with a `limit` (docs/limits.md); without it limits are not enforced (the CLI's local
   * `mt extop call`). `mt serve` and `mt worker` pass the store's limiter, whose counts hold across processes.
   */
  limiter?: CallLimiter;
  /** Sessions with remote MCP servers (connectors with `mcp`). */
  mcp?: {
    /** How long an open session with no call in flight is kept for the next call (default 30 000 ms). */
    sessionIdleMs?: number;
  };
}

/**
 * A credential the caller resolved for this call: `missing` names a secret that does not exist, `forbidden` one the
 * run's key may not use (named by the run input `input`); either makes the call fail with nothing sent.
 */
export type CallCredential =
  | { header: string; value: string }
  | { missing: { secret: string } }
  | { forbidden: { secret: string; input: string } }
  /** An OAuth2 connector's access token (of the end user's connection), sent as `Authorization: Bearer`. */
  | { bearer: string }
  /** An OAuth2 connector whose end user has no usable connection: nothing is sent (`reason`: missing, scopes...). */
  | { authorization: { provider: string; endUser: string; reason: string } }
  /** An OAuth2 connector whose token could not be had (its provider failed): the call fails with it, nothing sent. */
  | { failed: MtError };

/** One limit a call is admitted under: `calls` per `perMs` (a sliding window) and/or `inFlight` at once. */
export interface CallLimit {
  /** What it counts: `tool:<name>` or `origin:<scheme://host:port>`, with `|key:<id>` or `|end-user:<id>` per key or end user. */
  key: string;
  calls?: number;
  perMs?: number;
  inFlight?: number;
}

/** Admits calls under limits; the store's `createLimiter` is one. */
export interface CallLimiter {
  /**
   * Admits a call under every one of `limits` at once from what this process holds (a local allowance: no round
   * trip, nothing to release), or returns false having taken nothing: then ask {@link CallLimiter.acquire}.
   */
  spend(namespace: string, limits: readonly CallLimit[]): boolean;
  /** Admits a call under every one of `limits` or none, in `namespace`. */
  acquire(request: {
    namespace: string;
    limits: CallLimit[];
    /** How long an in-flight slot is held at most (a process killed mid-call frees it once this lapses). */
    leaseMs: number;
  }): Promise<
    | { granted: true; release(): Promise<void> }
    | { granted: false; retryAfterMs: number; reason: 'calls' | 'in-flight'; key: string }
  >;
}

/** A run's start to admit under its interaction's `limit` (docs/limits.md, "A key's limit on starting runs"). */
export interface RunStartLimitInput {
  namespace: string;
  interaction: string;
  limit: { perKey?: { calls: number; per: string }; perEndUser?: { calls: number; per: string } } | undefined;
  /** The key that starts the run; a start without one (a schedule, a trigger) is not counted. */
  keyId: string | undefined;
  endUser: string | undefined;
}

/** One run-input binding and the run's value for it. */
export interface RunBindingValue {
  binding: FunctionBinding;
  value: Json | undefined;
}

/** One tool call as the engine, the server or the CLI hands it to the gateway. */
export interface ToolCallInput {
  tool: Tool;
  connector: Connector;
  /** The model's parsed arguments: `{ request?: {...}, additionalInputs?: { "path.x": v, "query.y": v } }`. */
  arguments: unknown;
  /** Values from run inputs; a missing or empty value falls back to `binding.default`. */
  runBindings?: RunBindingValue[];
  /** The secret for the call, resolved by the caller; `missing` makes the call fail with nothing sent. */
  credential?: CallCredential;
  /**
   * The call's identity, stable across retries of this call and different for any other call (for a run: run id,
   * model turn and call index). The `Idempotency-Key` header of a non-GET is derived from it, and the approval hash
   * covers it.
   */
  idempotencyKey?: string;
  /** Cancels the call. */
  signal?: AbortSignal;
  /** Whom the call is made for (for example the namespace); handed to `platform.token` and nothing else. */
  caller?: string;
  /** The run the call is made for, when it is one: named in the operator's log lines about the call, nothing else. */
  runId?: string;
  /**
   * The API key the call is made under (a REST or MCP caller's key; for a run, the key that started its tree): the
   * key a `limit.perKey` counts (docs/limits.md). None: no per-key limit applies.
   */
  keyId?: string;
  /** The end user the call acts for (a run's, an MCP call's `Mt-End-User`): the one a `limit.perEndUser` counts. */
  endUser?: string;
  /**
   * A run's call over a limit with onLimit "wait": how long it may wait in the worker for the window to open. When the
   * limit admits it no sooner, it is refused with `limited.waitMs` set, and the engine makes the run wait durably
   * (PendingLimit) instead. Absent: it waits in the worker for up to the gateway's deadline.
   */
  limitWaitMs?: number;
  /** Told once, right before the call's first HTTP request is sent (the engine starts its HTTP span there). */
  onSend?: () => void;
}

/** A person's approval of one prepared call, as {@link Gateway.callApproved} uses it. */
export interface ApprovalUse {
  /** The {@link PreparedRequest.hash} of the call the person was shown. */
  hash: string;
  /**
   * The last word before sending: checks that the call may still be made (versions enabled, key and secret there)
   * and consumes the approval in the statement that checks it against `hash`. Resolves with the reason when the
   * call may not be made (then nothing is sent), undefined when it may.
   */
  consume(hash: string): Promise<MtError | undefined>;
}

/** The request as it may be shown to a person: secret values masked. */
export interface PreparedRequestView {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: Json;
}

/** The outcome of one call; `ok` is true only for a 2xx answer that passed every check. */
export interface ToolCallResult {
  ok: boolean;
  status?: number;
  headers?: Record<string, string>;
  body?: Json | string;
  /** Set when the body was cut at `limit` decoded bytes; `size` is the full size when it was known. */
  truncated?: { limit: number; size?: number };
  error?: string;
  code?: string;
  request?: PreparedRequestView;
  /**
   * A call refused by its tool's limit (`code` api:limits:exceeded): when to try again, and the IETF `RateLimit`
   * and `RateLimit-Policy` field values (draft-ietf-httpapi-ratelimit-headers) a REST or MCP answer carries.
   */
  limited?: {
    limit: string;
    retryAfterSeconds: number;
    rateLimit: string;
    rateLimitPolicy: string;
    /** The policy's name in the `RateLimit` fields, such as `tool-create-ticket` or `tool-create-ticket-key`. */
    name: string;
    /**
     * Set on a run's call with onLimit "wait" refused because the window opens later than `limitWaitMs`: milliseconds
     * until the limit may admit it (the run then waits durably for that long).
     */
    waitMs?: number;
  };
}

/** A request that passed every step except sending. */
export interface PreparedRequest {
  readonly prepared: true;
  method: string;
  url: URL;
  headers: Record<string, string>;
  /** The JSON body, already serialised. */
  body?: string;
  /** The masked view for display. */
  view: PreparedRequestView;
  /** What a person approves: method, URL, non-secret headers, body and the call's identity (never a secret or token). */
  hash: string;
}

/** One tool of a remote MCP server, as its `tools/list` gives it. */
export interface McpToolInfo {
  name: string;
  description?: string;
  inputSchema: JsonSchema;
}

/** Options of {@link Gateway.listMcpTools}. */
export interface McpListOptions {
  /** Sent on every HTTP request of the session (an `authorization` value without a space gets `Bearer `). */
  credential?: { header: string; value: string };
  /** Cancels the listing. */
  signal?: AbortSignal;
}

/** One outbound tool call, made safely. */
export interface Gateway {
  /**
   * Makes the call; never throws for the call's own failure, which comes back as an error result. A tool with
   * `requiresApproval` is refused (`api:approvals:required`): it is sent only by {@link Gateway.callApproved}.
   */
  call(input: ToolCallInput): Promise<ToolCallResult>;
  /** Runs every step except sending (name resolution and the address check included), once, into request, view and hash. */
  prepare(input: ToolCallInput): Promise<PreparedRequest | ToolCallResult>;
  /**
   * The one way a call that needs approval is sent: prepares it again and sends it only if its hash is still the
   * approved one (else `api:approvals:request-changed`) and `approval.consume` lets it (else its reason); nothing is
   * sent otherwise. Never throws for the call's own failure; rejects when `consume` does.
   */
  callApproved(input: ToolCallInput, approval: ApprovalUse): Promise<ToolCallResult>;
  /**
   * Lists the tools of the remote MCP server at `target.url` (Streamable HTTP): every page of `tools/list`, at most
   * 1 000 tools, on a session of its own that is closed after. The address is judged like a call's, no redirect
   * leaves the origin, the deadline is `timeoutMs`. Rejects with an MtError (`api:connectors:address-blocked`,
   * `api:gateway:timeout`, `api:gateway:upstream-unreachable`, `api:gateway:upstream-status`,
   * `api:gateway:mcp-redirect-refused`, `api:gateway:mcp-error`, `api:gateway:cancelled`).
   */
  listMcpTools(target: { url: string }, options?: McpListOptions): Promise<McpToolInfo[]>;
  /**
   * Admits a run's start under its interaction's `limit`, counted with the tool calls' limits; rejects with
   * api:limits:exceeded over it. Absent on a gateway without it (a test's): starts are not limited.
   */
  admitRunStart?(input: RunStartLimitInput): Promise<void>;
  /** Closes the connections and the MCP sessions the gateway opened. */
  close(): Promise<void>;
}

/** True when `value` is a {@link PreparedRequest} rather than an error result. */
export function isPreparedRequest(value: PreparedRequest | ToolCallResult): value is PreparedRequest {
  return (value as PreparedRequest).prepared === true;
}
