import type { TreeSpendRun } from '@maitento/store';
import { describe, expect, it } from 'vitest';
import { treeBudgets } from './budget.js';

// A run's budget covers the runs below it (docs/runs.md "Usage and budgets"): the figures a run is held to, and the
// ancestor whose budget stops a child.
const run = (id: string, parentRunId: string | null, tokens: number, budget: number | null): TreeSpendRun => ({
  id,
  parentRunId,
  tokens,
  costUsd: tokens / 1e6,
  budget: budget === null ? null : { tokens: budget, costUsd: null, onExceeded: 'fail' },
});

describe('treeBudgets', () => {
  const tree = [
    run('top', null, 400, 2000),
    run('a', 'top', 800, null),
    run('a1', 'a', 400, null),
    run('b', 'top', 200, null),
  ];

  it('counts a run’s own spend (from its events) and every run below it', () => {
    expect(treeBudgets(tree, 'top', { tokens: 400, costUsd: 0.0004 }).spent).toEqual({
      tokens: 1800,
      costUsd: 0.0018,
    });
    // Its own events may be ahead of its column (the turn just stored): they win for itself.
    expect(treeBudgets(tree, 'a', { tokens: 1200, costUsd: 0.0012 }).spent.tokens).toBe(1600);
  });

  it('names the nearest ancestor whose budget its part of the tree reached', () => {
    expect(treeBudgets(tree, 'a1', { tokens: 400, costUsd: 0.0004 })).toEqual({
      spent: { tokens: 400, costUsd: 0.0004 },
      ancestorsBudgeted: true,
    });
    const over = treeBudgets(tree, 'a1', { tokens: 1000, costUsd: 0.001 });
    expect(over.ancestor).toMatchObject({ id: 'top', spent: { tokens: 2400 } });
    // A nearer ancestor with a budget of its own is named first.
    const nested = [...tree.filter((r) => r.id !== 'a'), run('a', 'top', 800, 1000)];
    expect(treeBudgets(nested, 'a1', { tokens: 400, costUsd: 0 }).ancestor?.id).toBe('a');
  });

  it('says when no run above has a budget', () => {
    const free = [run('top', null, 400, null), run('child', 'top', 100, null)];
    expect(treeBudgets(free, 'child', { tokens: 100, costUsd: 0 })).toEqual({
      spent: { tokens: 100, costUsd: 0 },
      ancestorsBudgeted: false,
    });
  });
});
