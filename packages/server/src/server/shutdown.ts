import { HAND_BACK_MS } from '@maitento/engine';

/**
 * The phases of a shutdown (docs/operations.md, "Shutdown"), all counted from the signal: readiness false at once;
 * `mt serve` keeps answering for `unreadyMs` (a load balancer sees it unready and stops sending), then closes its
 * listener; the tool calls in flight may finish until `drainMs`, then they are aborted and their runs handed back
 * (each call replayed later with its Idempotency-Key); the process exits by `graceMs` whatever is left.
 */
export interface ShutdownPlan {
  graceMs: number;
  unreadyMs: number;
  drainMs: number;
}

/** The plan of a shutdown within `graceMs`: the hand-back gets a third of the grace, at most {@link HAND_BACK_MS}. */
export function shutdownPlan(settings: { graceMs: number; unreadyMs: number }): ShutdownPlan {
  const drainMs = settings.graceMs - Math.min(HAND_BACK_MS, Math.floor(settings.graceMs / 3));
  return { graceMs: settings.graceMs, unreadyMs: Math.min(settings.unreadyMs, drainMs), drainMs };
}

/** Whether this process is shutting down (readiness says so), and what begins when it does. */
export class ShutdownState {
  #begun = false;
  readonly #listeners: ((drainMs: number) => void)[] = [];

  get begun(): boolean {
    return this.#begun;
  }

  /** Runs `listener` with the drain's length when the shutdown begins. */
  onBegin(listener: (drainMs: number) => void): void {
    this.#listeners.push(listener);
  }

  /** Begins the shutdown (once): readiness turns false, the listeners (the worker's stop) start. */
  begin(drainMs: number): void {
    if (this.#begun) return;
    this.#begun = true;
    for (const listener of this.#listeners) listener(drainMs);
  }
}
