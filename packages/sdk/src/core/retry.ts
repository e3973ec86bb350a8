/** Statuses worth another try: a timeout, rate limiting, or a server failure. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

const BASE_DELAY_MS = 500;
const MAX_BACKOFF_MS = 8_000;
/** A `retry-after` longer than this is not waited for; the SDK's own backoff is used instead. */
const MAX_RETRY_AFTER_MS = 60_000;

/**
 * How long to wait before retry number `retry` (1-based): the server's `retry-after-ms` or
 * `retry-after` (seconds or an HTTP date) when it is sane, else exponential backoff with jitter.
 */
export function retryDelayMs(retry: number, headers: Headers | undefined, now = Date.now()): number {
  const fromServer = headers === undefined ? undefined : serverDelayMs(headers, now);
  if (fromServer !== undefined && fromServer >= 0 && fromServer <= MAX_RETRY_AFTER_MS) return fromServer;
  const backoff = Math.min(BASE_DELAY_MS * 2 ** (retry - 1), MAX_BACKOFF_MS);
  // Up to 25% less, so many clients retrying at once spread out.
  return Math.round(backoff * (1 - Math.random() * 0.25));
}

function serverDelayMs(headers: Headers, now: number): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms))) return Number(ms);
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Number(value) * 1000;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Resolves after `ms`, or rejects when `signal` aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
