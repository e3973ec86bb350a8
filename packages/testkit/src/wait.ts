/** Options of {@link waitFor}. */
export interface WaitForOptions<T> {
  /** How long to poll before failing (default 10 s). */
  timeoutMs?: number;
  /** The pause between two reads (default 50 ms). */
  intervalMs?: number;
  /** The error's message from the last value read (undefined when no read succeeded in time). */
  describe?: (last: T | undefined) => string | Promise<string>;
}

/**
 * Reads `read()` until `done(value)` holds and resolves with that value; rejects after `timeoutMs` with the message of
 * `describe` (or the last value as JSON). Every read counts against the deadline, and no read starts after it.
 * The one poll-until helper of the tests: runs through the SDK, the engine or a plain HTTP read alike.
 */
export async function waitFor<T>(
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  options: WaitForOptions<T> = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 50;
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await read();
    if (done(last)) return last;
    if (Date.now() + intervalMs > deadline) {
      const message = options.describe
        ? await options.describe(last)
        : `not done after ${timeoutMs} ms; last: ${JSON.stringify(last)}`;
      throw new Error(message);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
