import { describe, expect, it } from 'vitest';
import { compile, where } from './helpers.js';

// Conversation interactions (docs/mtr-language.md "Interaction"): interactions/conversation/<name>.mtr, a one-shot's
// properties and maxIdle (default 24 h); maxIdle is refused in a one-shot interaction.
const agent = 'model = "openai:gpt-4o-mini"\ninstructions = "Chat."\n';
const body = (extra = '') => `agent = {
  name = "Desk"
  agent = @ref("a")
}
task = "A customer writes: %%message%%"
inputs.prompts = [
  { name = "message" required = true }
]
${extra}`;

describe('a conversation interaction', () => {
  it('compiles from interactions/conversation/ with the default maxIdle of 24 hours', () => {
    const repo = compile({ 'agents/a.mtr': agent, 'interactions/conversation/desk.mtr': body() });
    expect(repo.diagnostics).toEqual([]);
    expect(repo.interactions[0]).toMatchObject({ name: 'desk', conversation: { maxIdleSeconds: 86_400 } });
  });

  it('reads maxIdle as a duration', () => {
    for (const [text, seconds] of [
      ['90s', 90],
      ['30m', 1800],
      ['2h', 7200],
      ['7d', 604_800],
    ] as const) {
      const repo = compile({
        'agents/a.mtr': agent,
        'interactions/conversation/desk.mtr': body(`maxIdle = "${text}"\n`),
      });
      expect(repo.diagnostics).toEqual([]);
      expect(repo.interactions[0]?.conversation).toEqual({ maxIdleSeconds: seconds });
    }
  });

  it('refuses a maxIdle that is no duration or longer than 30 days, at its value', () => {
    for (const text of ['24 hours', '0s', '31d', '1.5h']) {
      const repo = compile({
        'agents/a.mtr': agent,
        'interactions/conversation/desk.mtr': body(`maxIdle = "${text}"\n`),
      });
      expect(where(repo.diagnostics), text).toEqual(['interactions/conversation/desk.mtr:9:11 mtr:property:value']);
    }
  });

  it('keeps a one-shot interaction one-shot: no conversation, and maxIdle unknown there', () => {
    const oneShot = compile({ 'agents/a.mtr': agent, 'interactions/one-shot/desk.mtr': body() });
    expect(oneShot.interactions[0]).not.toHaveProperty('conversation');
    const refused = compile({ 'agents/a.mtr': agent, 'interactions/one-shot/desk.mtr': body('maxIdle = "1h"\n') });
    expect(refused.diagnostics.map((d) => d.code)).toEqual(['mtr:property:unknown']);
  });

  it('is one interaction name across both folders', () => {
    const repo = compile({
      'agents/a.mtr': agent,
      'interactions/conversation/desk.mtr': body(),
      'interactions/one-shot/desk.mtr': body(),
    });
    expect(repo.diagnostics.map((d) => d.code)).toContain('mtr:repo:duplicate-name');
  });
});
