import { afterEach, describe, expect, it, vi } from 'vitest';
import { setUpWithin, step } from './e2e/helpers/steps.js';

// The e2e set-ups' named steps and their one retry (test/e2e/helpers/steps.ts): a set-up out of time says which step
// was pending, and an abandoned attempt makes nothing more once its step ends.

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

afterEach(() => {
  vi.restoreAllMocks();
});

describe('set-up steps', () => {
  it('fails a set-up out of time naming the pending step and the steps done, with their times', async () => {
    const failed = setUpWithin(300, async () => {
      await step('quick one', () => pause(10));
      await step('the stuck one', () => new Promise(() => {}));
    });
    await expect(failed).rejects.toThrow(
      /attempt 1 of the set-up did not finish in 0.3 s: pending: the stuck one \(0\.\d s\); done: quick one 0\.\d s/,
    );
  });

  it('abandons an attempt out of time, closes what it made, and returns the next attempt', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    let attempts = 0;
    let undone = 0;
    const after: string[] = [];
    let release: () => void = () => {};
    const made = await setUpWithin(
      300,
      async () => {
        attempts += 1;
        const mine = attempts;
        if (mine === 1) {
          // The first attempt's step hangs until after the second has started; once it ends it fails, and the code
          // after it never runs.
          await step('the browser', () => new Promise<void>((resolve) => (release = resolve)));
          after.push(`attempt ${mine} went on`);
        }
        await step('the stack', () => pause(10));
        return `made by attempt ${mine}`;
      },
      {
        attempts: 2,
        undo: async () => {
          undone += 1;
        },
      },
    );
    expect(made).toBe('made by attempt 2');
    expect(undone).toBe(1);
    expect(String(errors.mock.calls[0]?.[0])).toMatch(/attempt 1 .*pending: the browser/);
    release();
    await pause(20);
    expect(after).toEqual([]);
  });

  it('names every attempt when the last runs out of time too', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const failed = setUpWithin(200, () => step('the database', () => new Promise(() => {})), { attempts: 2 });
    await expect(failed).rejects.toThrow(/attempt 1 .*the database[\s\S]*\nattempt 2 .*the database/);
  });

  it('does not retry a set-up that throws: its error is the one reported', async () => {
    let attempts = 0;
    const failed = setUpWithin(
      1000,
      async () => {
        attempts += 1;
        await step('deploy', async () => {
          throw new Error('deploy answered 400');
        });
      },
      { attempts: 2 },
    );
    await expect(failed).rejects.toThrow('deploy answered 400');
    expect(attempts).toBe(1);
  });
});
