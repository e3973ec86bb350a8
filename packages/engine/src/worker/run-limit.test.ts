import { describe, expect, it } from 'vitest';
import { BUSY_LOOP, LOAD_WINDOW_MS, type LoopGauge, runLimit } from './run-limit.js';

/** A gauge the test drives: its clock, and the busy share each window reports. */
function fakeGauge(): LoopGauge & { at: number; busy: number } {
  return {
    at: 0,
    busy: 0,
    now() {
      return this.at;
    },
    busyShare() {
      return this.busy;
    },
  };
}

describe('runLimit', () => {
  it('starts at one and grows by one a window while the runs working reach it and the loop has room, up to the slots', () => {
    const gauge = fakeGauge();
    const limit = runLimit(3, gauge);
    let current = limit(1);
    expect(current).toBe(1);
    const seen: number[] = [];
    for (let i = 1; i <= 4; i++) {
      gauge.at = i * LOAD_WINDOW_MS;
      current = limit(current);
      seen.push(current);
    }
    expect(seen).toEqual([2, 3, 3, 3]);
  });

  it('does not grow while fewer runs work than it allows, nor before a window has passed', () => {
    const gauge = fakeGauge();
    const limit = runLimit(8, gauge);
    gauge.at = LOAD_WINDOW_MS - 1;
    expect(limit(1)).toBe(1);
    gauge.at = LOAD_WINDOW_MS;
    expect(limit(1)).toBe(2);
    gauge.at = 2 * LOAD_WINDOW_MS;
    expect(limit(1)).toBe(2);
  });

  it('shrinks by one a window while the loop is busier than the threshold, never below one', () => {
    const gauge = fakeGauge();
    const limit = runLimit(8, gauge);
    for (let i = 1; i <= 3; i++) {
      gauge.at = i * LOAD_WINDOW_MS;
      limit(8);
    }
    expect(limit(8)).toBe(4);
    gauge.busy = BUSY_LOOP;
    const seen: number[] = [];
    for (let i = 4; i <= 8; i++) {
      gauge.at = i * LOAD_WINDOW_MS;
      seen.push(limit(8));
    }
    expect(seen).toEqual([3, 2, 1, 1, 1]);
  });
});
