import { describe, expect, it } from 'vitest';
import { compile, where } from './helpers.js';

// An interaction's budget (docs/mtr-language.md "Interaction", docs/runs.md "Usage and budgets"): tokens, costUsd or
// both, and onExceeded "wait" (default) or "fail".
const agent = 'model = "openai:gpt-4o-mini"\ninstructions = "Help."\n';
const body = (extra = '') => `agent = {
  name = "Desk"
  agent = @ref("a")
}
task = "A customer writes: %%message%%"
inputs.prompts = [
  { name = "message" required = true }
]
${extra}`;
const one = (extra: string) => compile({ 'agents/a.mtr': agent, 'interactions/one-shot/desk.mtr': body(extra) });

describe('an interaction budget', () => {
  it('compiles tokens, cost and what happens when a run reaches them', () => {
    const repo = one('budget = { tokens = 1000 costUsd = 0.5 onExceeded = "fail" }\n');
    expect(repo.diagnostics).toEqual([]);
    expect(repo.interactions[0]?.budget).toEqual({ tokens: 1000, costUsd: 0.5, onExceeded: 'fail' });
    expect(one('budget = { tokens = 1000 }\n').interactions[0]?.budget).toEqual({ tokens: 1000, onExceeded: 'wait' });
  });

  it('keeps an interaction without one as it was (no budget property, so the same version)', () => {
    expect(one('').interactions[0]).not.toHaveProperty('budget');
  });

  it('refuses a limit that is not one, a budget with no limit, and an unknown onExceeded', () => {
    expect(where(one('budget = { tokens = 0 }\n').diagnostics)).toEqual([
      'interactions/one-shot/desk.mtr:9:21 mtr:property:type',
    ]);
    expect(where(one('budget = { tokens = 1.5 }\n').diagnostics)).toEqual([
      'interactions/one-shot/desk.mtr:9:21 mtr:property:type',
    ]);
    expect(where(one('budget = { costUsd = -1 }\n').diagnostics)).toEqual([
      'interactions/one-shot/desk.mtr:9:22 mtr:property:type',
    ]);
    expect(one('budget = { onExceeded = "wait" }\n').diagnostics.map((d) => d.code)).toEqual(['mtr:property:type']);
    expect(one('budget = { tokens = 5 onExceeded = "later" }\n').diagnostics.map((d) => d.code)).toEqual([
      'mtr:property:value',
    ]);
    expect(one('budget = { tokenz = 5 }\n').diagnostics.map((d) => d.code)).toContain('mtr:property:unknown');
  });
});
