/** Above this share of busy time, the event loop has no room for more runs doing engine work. */
export const BUSY_LOOP = 0.7;
/** How often the event loop's load is measured and the limit adjusted. */
export const LOAD_WINDOW_MS = 20;

/** The event loop as the limit reads it: the time, and the share of it the loop was busy since the last read. */
export interface LoopGauge {
  now(): number;
  busyShare(): number;
}

/** This process's event loop (`performance.eventLoopUtilization()`). */
export function loopGauge(): LoopGauge {
  let mark = performance.eventLoopUtilization();
  return {
    now: () => performance.now(),
    busyShare() {
      const next = performance.eventLoopUtilization();
      const share = performance.eventLoopUtilization(next, mark).utilization;
      mark = next;
      return share;
    },
  };
}

/**
 * The limit on a worker's runs *doing engine work* (not waiting on a model or a tool), at most `slots`: one at
 * first; after each {@link LOAD_WINDOW_MS}, one more if the loop was busy less than {@link BUSY_LOOP} of the time
 * while the runs working had reached the limit, one fewer (down to one) if it was busier. Call it with the runs
 * working now, whenever the worker may take a run; it answers the limit.
 */
export function runLimit(slots: number, gauge: LoopGauge = loopGauge()): (working: number) => number {
  let limit = 1;
  let windowStart = gauge.now();
  let reached = false;
  return (working) => {
    if (working >= limit) reached = true;
    const now = gauge.now();
    if (now - windowStart >= LOAD_WINDOW_MS) {
      const busy = gauge.busyShare();
      if (busy >= BUSY_LOOP) limit = Math.max(1, limit - 1);
      else if (reached) limit = Math.min(slots, limit + 1);
      windowStart = now;
      reached = working >= limit;
    }
    return limit;
  };
}
