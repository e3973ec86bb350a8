import { describe, expect, it } from 'vitest';
import { shutdownPlan } from '../src/server/shutdown.js';

// The phases of a shutdown within its grace (docs/operations.md, "Shutdown").
describe('shutdownPlan', () => {
  it('leaves the hand-back a third of the grace, at most 5 s, and the unready window within the drain', () => {
    expect(shutdownPlan({ graceMs: 30_000, unreadyMs: 5000 })).toEqual({
      graceMs: 30_000,
      unreadyMs: 5000,
      drainMs: 25_000,
    });
    expect(shutdownPlan({ graceMs: 3000, unreadyMs: 1000 })).toEqual({ graceMs: 3000, unreadyMs: 1000, drainMs: 2000 });
    expect(shutdownPlan({ graceMs: 3000, unreadyMs: 5000 })).toEqual({ graceMs: 3000, unreadyMs: 2000, drainMs: 2000 });
    expect(shutdownPlan({ graceMs: 120_000, unreadyMs: 0 }).drainMs).toBe(115_000);
  });
});
