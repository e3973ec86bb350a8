import { isMtError } from '@maitento/errors';
import { limitWindowMs } from '@maitento/sdk/wire';
import { gatewayErrors } from '../errors.js';
import type { CallLimit, CallLimiter, RunStartLimitInput, ToolCallInput, ToolCallResult } from './types.js';

/** A call admitted under its limits: release its in-flight slots once the call ends. */
export interface Admitted {
  release(): Promise<void>;
}

type Limit = NonNullable<ToolCallInput['tool']['limit']>;

/** A call admitted with nothing to release (no limit, or no count of calls in flight): the caller skips the release. */
export const NONE: Admitted = { release: async () => {} };

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      done();
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      done();
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

type Counts = Pick<Limit, 'calls' | 'per' | 'inFlight'>;

/** What a limit is, said the way the model and the operator read it. */
function describe(limit: Counts): string {
  const parts: string[] = [];
  if (limit.calls !== undefined && limit.per !== undefined) parts.push(`${limit.calls} calls per ${limit.per}`);
  if (limit.inFlight !== undefined) parts.push(`${limit.inFlight} calls in flight`);
  return parts.join(' and ');
}

// The windows met so far, parsed once: a call far from its limit costs a few µs (decision 0375).
const windows = new Map<string, number | undefined>();
function windowMs(per: string): number | undefined {
  if (!windows.has(per)) {
    if (windows.size >= 1000) windows.clear();
    windows.set(per, limitWindowMs(per));
  }
  return windows.get(per);
}

function callLimit(key: string, limit: Counts | undefined): CallLimit | undefined {
  if (limit === undefined) return undefined;
  const perMs = limit.per === undefined ? undefined : windowMs(limit.per);
  const out: CallLimit = { key };
  if (limit.calls !== undefined && perMs !== undefined) {
    out.calls = limit.calls;
    out.perMs = perMs;
  }
  if (limit.inFlight !== undefined) out.inFlight = limit.inFlight;
  return out.calls === undefined && out.inFlight === undefined ? undefined : out;
}

/** The origin a connector's limit counts: scheme, host and port of its URL (its text when it is a platform path). */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** One limit of a call, with what the refusal says of it. */
interface Counted {
  spec: CallLimit;
  counts: Counts;
  /** The policy's name in the RateLimit fields. */
  name: string;
  /** What it limits, in words: `1 calls per 1h`, `... to <origin>`, `... for key <id>`. */
  what: string;
}

/** The limits of one tool version and its connector's, worked out once (see {@link planOf}). */
interface Plan {
  tool: string;
  url: string;
  /** The counts of every call (tool, origin), with their specs in the limiter's order. */
  counted: Counted[];
  limits: CallLimit[];
  /** Whether a count is per key or per end user (then a call adds its own), or of calls in flight (then released). */
  scoped: boolean;
  inFlight: boolean;
}

// Plans by the tool's limit object (a deployed version's, kept by the cache) and the connector's: a call far from its
// limit then builds no key, name or description (decision 0375).
const plans = new WeakMap<object, WeakMap<object, Plan>>();
const NO_LIMIT = {};

function planOf(input: ToolCallInput): Plan {
  const byTool = input.tool.limit ?? NO_LIMIT;
  const byConnector = input.connector.limit ?? NO_LIMIT;
  let inner = plans.get(byTool);
  if (inner === undefined) {
    inner = new WeakMap();
    plans.set(byTool, inner);
  }
  const known = inner.get(byConnector);
  if (known !== undefined && known.tool === input.tool.name && known.url === input.connector.url) return known;
  const counted: Counted[] = [];
  let scoped = false;
  for (const { key, name, to, limit } of sources(input)) {
    if (limit === undefined) continue;
    if (limit.perKey !== undefined || limit.perEndUser !== undefined) scoped = true;
    const spec = callLimit(key, limit);
    if (spec !== undefined) counted.push({ spec, counts: limit, name, what: `${describe(limit)}${to}` });
  }
  const plan: Plan = {
    tool: input.tool.name,
    url: input.connector.url,
    counted,
    limits: counted.map((c) => c.spec),
    scoped,
    inFlight: counted.some((c) => c.spec.inFlight !== undefined),
  };
  inner.set(byConnector, plan);
  return plan;
}

// The tool's limit and its connector's origin's, with the key, policy name and words of each.
function sources(input: ToolCallInput): { key: string; name: string; to: string; limit: Limit | undefined }[] {
  // The origin only when its connector has a limit.
  const origin = input.connector.limit === undefined ? '' : originOf(input.connector.url);
  return [
    {
      key: `tool:${input.tool.name}`,
      name: `tool-${input.tool.name.replace(/[^A-Za-z0-9_.-]/g, '-')}`,
      to: '',
      limit: input.tool.limit,
    },
    { key: `origin:${origin}`, name: 'origin', to: ` to ${origin}`, limit: input.connector.limit },
  ];
}

/**
 * The limits a call is admitted under: its tool's and its connector's origin's, each with its counts for every call
 * and, apart, for the call's key (`perKey`) and end user (`perEndUser`) when the call has one.
 */
function limitsOf(input: ToolCallInput): { counted: Counted[]; limits: CallLimit[]; inFlight: boolean } {
  const plan = planOf(input);
  if (!plan.scoped || (input.keyId === undefined && input.endUser === undefined)) return plan;
  const counted = [...plan.counted];
  for (const { key, name, to, limit } of sources(input)) {
    if (limit === undefined) continue;
    for (const [who, scopedKey, scopedName, counts] of [
      [` for key ${input.keyId}`, `${key}|key:${input.keyId}`, `${name}-key`, input.keyId && limit.perKey],
      [
        ` for end user ${input.endUser}`,
        `${key}|end-user:${input.endUser}`,
        `${name}-end-user`,
        input.endUser && limit.perEndUser,
      ],
    ] as const) {
      if (!counts) continue;
      const spec = callLimit(scopedKey, counts);
      if (spec !== undefined) counted.push({ spec, counts, name: scopedName, what: `${describe(counts)}${to}${who}` });
    }
  }
  return {
    counted,
    limits: counted.map((c) => c.spec),
    inFlight: counted.some((c) => c.spec.inFlight !== undefined),
  };
}

/**
 * Whether a call is admitted at once under its limits from the permits this process holds (far from them: no round
 * trip, no promise, nothing to release; decision 0375). False: {@link admit} asks the shared count.
 */
export function admitHere(limiter: CallLimiter, input: ToolCallInput): boolean {
  const { limits, inFlight } = limitsOf(input);
  return !inFlight && limits.length > 0 && limiter.spend(input.caller ?? 'default', limits);
}

/**
 * Admits a call under its tool's `limit` and its connector's origin `limit` (docs/limits.md), each counted for every
 * call and, with `perKey` / `perEndUser`, for the call's key and end user apart. A run's call with onLimit "wait" (the
 * default; the tool's, else the connector's) waits until the limiter admits it, at most `limitWaitMs` (else `waitMs`):
 * past that, with `limitWaitMs`, it is refused with `limited.waitMs` (the run waits durably), else like "fail". A
 * direct call (REST, MCP: no run) and one with onLimit "fail" are refused at once with api:limits:exceeded and when to
 * try again. Returns what to release, or the refusal as a result.
 */
export async function admit(
  limiter: CallLimiter | undefined,
  input: ToolCallInput,
  waitMs: number,
  leaseMs: number,
): Promise<Admitted | ToolCallResult> {
  if (limiter === undefined) return NONE;
  const { counted, limits, inFlight } = limitsOf(input);
  if (counted.length === 0) return NONE;
  const onLimit = input.tool.limit?.onLimit ?? input.connector.limit?.onLimit;
  const waits = input.runId !== undefined && onLimit !== 'fail';
  const durable = waits && input.limitWaitMs !== undefined;
  const until = Date.now() + (waits ? Math.min(waitMs, input.limitWaitMs ?? waitMs) : 0);
  const request = { namespace: input.caller ?? 'default', limits, leaseMs };
  for (;;) {
    let decision: Awaited<ReturnType<CallLimiter['acquire']>>;
    try {
      decision = await limiter.acquire(request);
    } catch (error) {
      // The shared count did not answer in time (a busy database): nothing was sent. A run's call that may wait durably
      // waits a moment and asks again, rather than failing a call the limit may well admit; any other call fails.
      if (!durable || !isMtError(error) || error.code !== 'api:store:unavailable') throw error;
      return unanswered(input, counted[0] as Counted);
    }
    // Only a count of calls in flight has a slot to give back once the call ends.
    if (decision.granted) return inFlight ? { release: decision.release } : NONE;
    const left = until - Date.now();
    if (left <= 0 || (durable && decision.retryAfterMs > left)) {
      const one = counted.find((c) => c.spec.key === decision.key) as Counted;
      return refusal(input, one, decision.retryAfterMs, durable);
    }
    await sleep(Math.min(decision.retryAfterMs, left), input.signal ?? new AbortController().signal);
  }
}

/** How long a run's call waits (durably) when the shared count did not answer, before it asks again. */
export const LIMIT_UNANSWERED_WAIT_MS = 1000;

// A run's call whose limits' count did not answer: it waits durably like one over its limit, and asks again.
function unanswered(input: ToolCallInput, one: Counted): ToolCallResult {
  const refused = refusal(input, one, LIMIT_UNANSWERED_WAIT_MS, true);
  const limited = refused.limited as NonNullable<ToolCallResult['limited']>;
  return { ...refused, limited: { ...limited, limit: `${limited.limit} (its count did not answer in time)` } };
}

function refusal(input: ToolCallInput, one: Counted, retryAfterMs: number, durable: boolean): ToolCallResult {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  const error = gatewayErrors.create('api:limits:exceeded', {
    name: input.tool.name,
    done: 'called',
    limit: one.what,
    one: 'call',
    seconds,
  });
  return {
    ok: false,
    error: error.message,
    code: error.code,
    limited: {
      limit: one.what,
      retryAfterSeconds: seconds,
      ...rateLimitFields(one, seconds),
      name: one.name,
      ...(durable ? { waitMs: retryAfterMs } : {}),
    },
  };
}

// draft-ietf-httpapi-ratelimit-headers: the policy's quota `q` per window `w` (seconds), and what is left `r` with the
// seconds `t` until it is restored. A cap on calls in flight has no window: it is stated with `w` omitted.
function rateLimitFields(one: Counted, seconds: number): { rateLimit: string; rateLimitPolicy: string } {
  const name = `"${one.name}"`;
  const { spec } = one;
  const quota = spec.calls ?? spec.inFlight ?? 0;
  const policy =
    spec.perMs === undefined ? `${name};q=${quota}` : `${name};q=${quota};w=${Math.round(spec.perMs / 1000)}`;
  return { rateLimit: `${name};r=0;t=${seconds}`, rateLimitPolicy: policy };
}

/**
 * Admits the start of a run of an interaction under its `limit` (docs/limits.md, "A key's limit on starting runs"):
 * its `perKey` count for the starting key and its `perEndUser` count for the run's end user, at once or neither, in
 * the same shared count as tool calls (`interaction:<name>|key:<id>`, `interaction:<name>|end-user:<name>`). Over it,
 * rejects with api:limits:exceeded (429) whose details carry `retryAfterSeconds` and the IETF `RateLimit` and
 * `RateLimit-Policy` fields, which the server's error handler sets.
 */
export async function admitRunStart(limiter: CallLimiter | undefined, input: RunStartLimitInput): Promise<void> {
  const { limit } = input;
  if (limiter === undefined || limit === undefined) return;
  const base = `interaction:${input.interaction}`;
  const name = `interaction-${input.interaction.replace(/[^A-Za-z0-9_.-]/g, '-')}`;
  const counted: Counted[] = [];
  for (const [who, scoped, suffix, words, counts] of [
    [input.keyId, 'key', 'key', 'key', limit.perKey],
    [input.endUser, 'end-user', 'end-user', 'end user', limit.perEndUser],
  ] as const) {
    if (who === undefined || counts === undefined) continue;
    const spec = callLimit(`${base}|${scoped}:${who}`, counts);
    if (spec === undefined) continue;
    const what = `${counts.calls} starts per ${counts.per} for ${words} ${who}`;
    counted.push({ spec, counts, name: `${name}-${suffix}`, what });
  }
  if (counted.length === 0) return;
  const decision = await limiter.acquire({
    namespace: input.namespace,
    limits: counted.map((c) => c.spec),
    leaseMs: 0,
  });
  if (decision.granted) return;
  const one = counted.find((c) => c.spec.key === decision.key) as Counted;
  const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  throw gatewayErrors.create(
    'api:limits:exceeded',
    { name: input.interaction, done: 'started', limit: one.what, one: 'start', seconds },
    { details: { retryAfterSeconds: seconds, limit: one.what, ...rateLimitFields(one, seconds) } },
  );
}
