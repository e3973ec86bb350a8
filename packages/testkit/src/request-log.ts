/** Requests a test server received, in order, and a way to wait for one that has not come yet. */
export interface RequestLog<T> {
  /** Every request so far (the same array as it grows). */
  requests: T[];
  /** Records one request and wakes the waiters it matches. */
  push(request: T): void;
  /** Resolves with the first request that matches, waiting for it; rejects after `timeoutMs` with `missed()`. */
  waitFor(match: (request: T) => boolean, timeoutMs: number, missed: () => string): Promise<T>;
}

/** Starts an empty request log. */
export function createRequestLog<T>(): RequestLog<T> {
  const requests: T[] = [];
  const waiters = new Set<() => void>();
  return {
    requests,
    push: (request) => {
      requests.push(request);
      for (const wake of [...waiters]) wake();
    },
    waitFor: (match, timeoutMs, missed) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = requests.find(match);
          if (!found) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(missed()));
        }, timeoutMs);
        if (!check()) waiters.add(check);
      }),
  };
}
