/** Told when a deadline ends the call (the request in flight, which aborts itself). */
export interface DeadlineWatcher {
  onDeadline(reason: unknown): void;
}

/**
 * One deadline for a whole call: the request in flight watches it through one slot, other waits (lookups, tokens)
 * race it through listeners. A full AbortController costs an EventTarget per call, and a timer per call costs a timer-list insertion and
 * removal; deadlines are instead checked by one {@link DeadlineClock} per gateway.
 */
export class Deadline {
  aborted = false;
  reason: unknown = undefined;
  /** True when the clock, not the caller, ended the call. */
  timedOut = false;
  readonly expiresAt: number;
  /** The request in flight: one slot instead of a listener array and a closure per request. */
  watcher: DeadlineWatcher | undefined = undefined;
  #listeners: Array<() => void> | undefined;
  readonly #clock: DeadlineClock;
  #external: AbortSignal | undefined;
  #onExternal: (() => void) | undefined;

  constructor(clock: DeadlineClock, ms: number, external?: AbortSignal) {
    this.expiresAt = Date.now() + ms;
    this.#clock = clock;
    clock.add(this);
    if (external !== undefined) {
      if (external.aborted) this.abort(new Error('The call was cancelled.'));
      else {
        this.#external = external;
        this.#onExternal = () => this.abort(new Error('The call was cancelled.'));
        external.addEventListener('abort', this.#onExternal, { once: true });
      }
    }
  }

  /** Registers a listener for the end of the call. */
  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.#listeners === undefined) this.#listeners = [listener];
    else this.#listeners.push(listener);
  }

  /** Removes a listener registered with {@link addEventListener}. */
  removeEventListener(_type: 'abort', listener: () => void): void {
    const listeners = this.#listeners;
    if (listeners === undefined) return;
    const at = listeners.indexOf(listener);
    if (at >= 0) listeners.splice(at, 1);
  }

  /** Ends the call: every listener is told once. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.watcher?.onDeadline(reason);
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners !== undefined) for (const listener of listeners) listener();
  }

  /** Settles like `promise`, or rejects when the call ends first (for work undici does not run: lookups, tokens). */
  race<T>(promise: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(this.reason);
      if (this.aborted) return onAbort();
      this.addEventListener('abort', onAbort);
      promise.then(
        (value) => {
          this.removeEventListener('abort', onAbort);
          resolve(value);
        },
        (error: unknown) => {
          this.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
    });
  }

  /** Stops watching the deadline and lets go of the caller's signal. */
  dispose(): void {
    this.#clock.delete(this);
    if (this.#onExternal !== undefined) this.#external?.removeEventListener('abort', this.#onExternal);
  }
}

/** Checks the live deadlines of one gateway on a coarse tick (1/20 of the timeout, 10 ms to 1 s). */
export class DeadlineClock {
  readonly #live = new Set<Deadline>();
  readonly #tickMs: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(timeoutMs: number) {
    this.#tickMs = Math.min(1_000, Math.max(10, Math.floor(timeoutMs / 20)));
  }

  /** Starts watching `deadline`. */
  add(deadline: Deadline): void {
    this.#live.add(deadline);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#tick(), this.#tickMs);
      // Watching deadlines must never keep a process alive on its own.
      this.#timer.unref();
    }
  }

  /** Stops watching `deadline` (nothing happens when it is not watched). */
  delete(deadline: Deadline): void {
    this.#live.delete(deadline);
  }

  /** Stops the tick (the gateway is closing). */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #tick(): void {
    const now = Date.now();
    for (const deadline of this.#live) {
      if (deadline.expiresAt > now) continue;
      this.#live.delete(deadline);
      deadline.timedOut = true;
      deadline.abort(new Error('The deadline passed.'));
    }
  }
}
