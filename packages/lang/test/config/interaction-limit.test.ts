import { describe, expect, it } from 'vitest';
import { compile, where } from './helpers.js';

// An interaction's limit on starting runs (docs/limits.md, "A key's limit on starting runs"): perKey and perEndUser,
// each calls per window, checked like a tool's limit; into the interaction's content only when written.
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

describe("an interaction's limit on starting runs", () => {
  it('compiles perKey and perEndUser counts into the interaction', () => {
    const repo = one('limit = { perKey = { calls = 10 per = "1m" } perEndUser = { calls = 2 per = "1h" } }\n');
    expect(repo.diagnostics).toEqual([]);
    expect(repo.interactions[0]?.limit).toEqual({
      perKey: { calls: 10, per: '1m' },
      perEndUser: { calls: 2, per: '1h' },
    });
    expect(one('limit.perKey = { calls = 1 per = "5s" }\n').interactions[0]?.limit).toEqual({
      perKey: { calls: 1, per: '5s' },
    });
  });

  it('keeps an interaction without one as it was (no limit property, so the same version)', () => {
    expect(one('').interactions[0]).not.toHaveProperty('limit');
  });

  it("checks the counts like a tool's: calls with per, whole numbers, a window, not empty", () => {
    const noPer = one('limit.perKey = { calls = 1 }\n').diagnostics;
    expect(noPer.map((d) => d.code)).toEqual(['mtr:property:type']);
    expect(noPer[0]?.message).toContain('limit.perKey.per');
    expect(where(one('limit.perKey = { calls = 0 per = "1m" }\n').diagnostics)).toHaveLength(1);
    expect(where(one('limit.perEndUser = { calls = 1.5 per = "1m" }\n').diagnostics)).toHaveLength(1);
    expect(where(one('limit.perEndUser = { calls = 1 per = "2 minutes" }\n').diagnostics)).toHaveLength(1);
    expect(where(one('limit.perKey = {}\n').diagnostics)).toHaveLength(1);
    const empty = one('limit = {}\n').diagnostics;
    expect(empty).toHaveLength(1);
    expect(empty[0]?.message).toContain('perKey, perEndUser or both');
  });

  it('refuses what limits only tool calls (calls for every caller, inFlight, onLimit), with did you mean for a misspelling', () => {
    expect(where(one('limit = { calls = 10 per = "1m" }\n').diagnostics).length).toBeGreaterThan(0);
    expect(where(one('limit.perKey = { calls = 1 per = "1m" inFlight = 1 }\n').diagnostics)).toHaveLength(1);
    expect(where(one('limit = { perKey = { calls = 1 per = "1m" } onLimit = "fail" }\n').diagnostics)).toHaveLength(1);
    const typo = one('limit.perKy = { calls = 1 per = "1m" }\n').diagnostics;
    expect(typo.length).toBeGreaterThan(0);
    expect(typo.map((d) => `${d.message} ${d.hint ?? ''}`).join('\n')).toContain('perKey');
  });
});
