import { isMtError } from '@maitento/errors';
import { limitWindowMs } from '@maitento/sdk/wire';
import { gatewayErrors } from '../errors.js';
import type { CallLimit, CallLimiter, RunStartLimitInput, ToolCallInput, ToolCallResult } from './types.js';

/** A call admitted under its limits: release its in-flight slots once the call ends. */
export interface Admitted {
  release(): Promise<void>;
}

type Limit = NonNullable<ToolCallInput['tool']['limit']>;

const NONE: Admitted = { release: async () => {} };

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

/**
 * The limits a call is admitted under: its tool's and its connector's origin's, each with its counts for every call
 * and, apart, for the call's key (`perKey`) and end user (`perEndUser`) when the call has one.
 */
function limitsOf(input: ToolCallInput): Counted[] {
  const tool = `tool-${input.tool.name.replace(/[^A-Za-z0-9_.-]/g, '-')}`;
  // The origin only when its connector has a limit: parsing a URL is the dearest step of a call far from its limit.
  const origin = input.connector.limit === undefined ? '' : originOf(input.connector.url);
  const out: Counted[] = [];
  for (const [key, name, to, limit] of [
    [`tool:${input.tool.name}`, tool, '', input.tool.limit],
    [`origin:${origin}`, 'origin', ` to ${origin}`, input.connector.limit],
  ] as const) {
    if (limit === undefined) continue;
    const scopes: [string, string, string, Counts | undefined][] = [[key, name, '', limit]];
    if (input.keyId !== undefined) {
      scopes.push([`${key}|key:${input.keyId}`, `${name}-key`, ` for key ${input.keyId}`, limit.perKey]);
    }
    if (input.endUser !== undefined) {
      scopes.push([
        `${key}|end-user:${input.endUser}`,
        `${name}-end-user`,
        ` for end user ${input.endUser}`,
        limit.perEndUser,
      ]);
    }
    for (const [scopedKey, scopedName, who, counts] of scopes) {
      const spec = callLimit(scopedKey, counts);
      if (spec === undefined || counts === undefined) continue;
      out.push({ spec, counts, name: scopedName, what: `${describe(counts)}${to}${who}` });
    }
  }
  return out;
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
  const counted = limitsOf(input);
  if (counted.length === 0) return NONE;
  const limits = counted.map((c) => c.spec);
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
    if (decision.granted) return { release: decision.release };
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
