import { describe, expect, it } from 'vitest';
import { waitFor } from './wait.js';

describe('waitFor', () => {
  it('reads until the value is done and resolves with that value', async () => {
    let reads = 0;
    const value = await waitFor(
      () => ++reads,
      (n) => n === 3,
      { intervalMs: 1 },
    );
    expect(value).toBe(3);
    expect(reads).toBe(3);
  });

  it('rejects at its deadline with the message made from the last value, and reads no more after it', async () => {
    let reads = 0;
    const started = Date.now();
    const error = await waitFor(
      async () => ({ status: 'Running', reads: ++reads }),
      () => false,
      { timeoutMs: 200, intervalMs: 20, describe: (last) => `still ${last?.status} after ${last?.reads} reads` },
    ).catch((e: Error) => e);
    const elapsed = Date.now() - started;
    expect(error).toBeInstanceOf(Error);
    expect(String(error)).toMatch(/^Error: still Running after \d+ reads$/);
    expect(elapsed).toBeGreaterThanOrEqual(180);
    expect(elapsed).toBeLessThan(2_000);
    const after = reads;
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(reads).toBe(after);
  });

  it('names the last value as JSON when no describe is given', async () => {
    const error = await waitFor(
      () => ({ n: 1 }),
      () => false,
      { timeoutMs: 30, intervalMs: 10 },
    ).catch((e: Error) => e);
    expect(String(error)).toBe('Error: not done after 30 ms; last: {"n":1}');
  });
});
