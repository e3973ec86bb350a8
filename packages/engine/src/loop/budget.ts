// Budgets (docs/runs.md "Usage and budgets"): before each model turn, what the run spent is set against its budget.
import type { RunBudget, TreeSpendRun } from '@maitento/store';
import type { BudgetLimit, BudgetSpent, JournalEvent } from '../journal/events.js';

/** What a run's stored model responses spent: tokens in + out, and cost in USD. */
export function spentBy(events: readonly JournalEvent[]): BudgetSpent {
  let tokens = 0;
  let costUsd = 0;
  for (const event of events) {
    if (event.type !== 'model-response') continue;
    tokens += (event.data.usage.inputTokens ?? 0) + (event.data.usage.outputTokens ?? 0);
    costUsd += event.data.costUsd ?? 0;
  }
  return { tokens, costUsd: Math.round(costUsd * 1e10) / 1e10 };
}

/**
 * Whether a run that spent `spent` has reached `budget`: the next model turn is not asked for once the tokens or the
 * cost reach their limit. A turn's tokens are known only once it answered, so the turn that reaches the limit may
 * pass it; none starts after.
 */
export function budgetReached(spent: BudgetSpent, budget: RunBudget | null): budget is RunBudget {
  if (budget === null) return false;
  return (
    (budget.tokens !== null && spent.tokens >= budget.tokens) ||
    (budget.costUsd !== null && spent.costUsd >= budget.costUsd)
  );
}

/** The limits of a budget in words: `1000 tokens, $0.50`. */
export function limitText(budget: Pick<BudgetLimit, 'tokens' | 'costUsd'>): string {
  const parts: string[] = [];
  if (budget.tokens !== null) parts.push(`${budget.tokens} tokens`);
  if (budget.costUsd !== null) parts.push(`$${budget.costUsd} USD`);
  return parts.join(', ');
}

/** What a run spent in words: `1200 tokens, $0.0042 USD`. */
export function spentText(spent: BudgetSpent): string {
  return `${spent.tokens} tokens, $${spent.costUsd} USD`;
}

/** What a run's budget is held to: its own turns and its descendants', and an ancestor whose budget they reached. */
export interface TreeBudgetStanding {
  /** What the run and the runs below it spent. */
  spent: BudgetSpent;
  /** Whether a run above this one has a budget. */
  ancestorsBudgeted: boolean;
  /** The nearest ancestor whose budget its tree reached (this run works for it: no turn starts). */
  ancestor?: { id: string; budget: RunBudget; spent: BudgetSpent };
}

/**
 * A run's budget covers its child runs (agents as tools): what `selfId` and every run below it spent, from the tree's
 * usage columns (`ownSpent`, read from the run's own events, for itself), and the nearest ancestor whose own budget
 * its part of the tree reached.
 */
export function treeBudgets(runs: readonly TreeSpendRun[], selfId: string, ownSpent: BudgetSpent): TreeBudgetStanding {
  const byId = new Map(runs.map((run) => [run.id, run]));
  const children = new Map<string, string[]>();
  for (const run of runs) {
    if (run.parentRunId === null) continue;
    children.set(run.parentRunId, [...(children.get(run.parentRunId) ?? []), run.id]);
  }
  const below = (id: string): BudgetSpent => {
    const own = id === selfId ? ownSpent : { tokens: byId.get(id)?.tokens ?? 0, costUsd: byId.get(id)?.costUsd ?? 0 };
    let { tokens, costUsd } = own;
    for (const child of children.get(id) ?? []) {
      const spent = below(child);
      tokens += spent.tokens;
      costUsd += spent.costUsd;
    }
    return { tokens, costUsd: Math.round(costUsd * 1e10) / 1e10 };
  };
  const standing: TreeBudgetStanding = { spent: below(selfId), ancestorsBudgeted: false };
  for (let at = byId.get(selfId)?.parentRunId; at; at = byId.get(at)?.parentRunId) {
    const ancestor = byId.get(at);
    if (ancestor === undefined) break;
    if (ancestor.budget !== null) standing.ancestorsBudgeted = true;
    const spent = below(ancestor.id);
    if (budgetReached(spent, ancestor.budget)) {
      standing.ancestor = { id: ancestor.id, budget: ancestor.budget, spent };
      break;
    }
  }
  return standing;
}
