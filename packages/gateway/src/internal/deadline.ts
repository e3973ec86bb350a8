/** One deadline for a whole call: connecting, every redirect hop, reading the body, lookups and tokens. */
export interface Deadline {
  /** Aborts when the time is up (a `TimeoutError`) or when the caller's signal aborts (with the caller's reason). */
  readonly signal: AbortSignal;
  /** The call is over: clears the timer and lets go of the caller's signal. */
  end(): void;
}

/**
 * Starts a call's deadline: an `AbortController`, a timer cleared when the call ends, and a listener on the caller's
 * signal. Not `AbortSignal.any([caller, AbortSignal.timeout(ms)])`: with the caller's signal that costs about 8 µs a
 * call (10 µs with the timeout's finalizer) against under 0.5 µs, and its timers stay scheduled until collected.
 */
export function startDeadline(ms: number, caller?: AbortSignal): Deadline {
  const controller = new AbortController();
  if (caller?.aborted) {
    controller.abort(caller.reason);
    return { signal: controller.signal, end: () => {} };
  }
  const onCancel = () => controller.abort(caller?.reason);
  caller?.addEventListener('abort', onCancel, { once: true });
  const timer = setTimeout(() => controller.abort(new DOMException('The deadline passed.', 'TimeoutError')), ms);
  // A deadline never keeps a process alive on its own.
  timer.unref();
  return {
    signal: controller.signal,
    end() {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onCancel);
    },
  };
}

/** True when the deadline, not the caller, ended the call (the caller's abort carries the caller's reason). */
export function timedOut(deadline: AbortSignal, caller?: AbortSignal): boolean {
  return deadline.aborted && !(caller?.aborted === true && caller.reason === deadline.reason);
}

/** Settles like `promise`, or rejects with the signal's reason when it aborts first (lookups, tokens, sessions). */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
