/**
 * One deadline for a whole call, shaped as the signal undici accepts (`aborted`, `reason`, `addEventListener`).
 * A full AbortController costs an EventTarget per call; this costs one timer and an array.
 */
export class Deadline {
  aborted = false;
  reason: unknown = undefined;
  /** True when the timer, not the caller, ended the call. */
  timedOut = false;
  #listeners: Array<() => void> = [];
  readonly #timer: NodeJS.Timeout;
  readonly #external: AbortSignal | undefined;
  readonly #onExternal = () => this.abort(new Error('The call was cancelled.'));

  constructor(ms: number, external?: AbortSignal) {
    this.#timer = setTimeout(() => {
      this.timedOut = true;
      this.abort(new Error('The deadline passed.'));
    }, ms);
    this.#external = external;
    if (external !== undefined) {
      if (external.aborted) this.#onExternal();
      else external.addEventListener('abort', this.#onExternal, { once: true });
    }
  }

  /** Registers a listener for the end of the call (undici's abort listener). */
  addEventListener(_type: 'abort', listener: () => void): void {
    this.#listeners.push(listener);
  }

  /** Removes a listener registered with {@link addEventListener}. */
  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.#listeners.indexOf(listener);
    if (at >= 0) this.#listeners.splice(at, 1);
  }

  /** Ends the call: every listener is told once. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.#listeners;
    this.#listeners = [];
    for (const listener of listeners) listener();
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

  /** Stops the timer and lets go of the caller's signal. */
  dispose(): void {
    clearTimeout(this.#timer);
    this.#external?.removeEventListener('abort', this.#onExternal);
  }
}
