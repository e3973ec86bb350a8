import { langErrors, MODEL_PROVIDERS, parseModel } from '@maitento/lang';
import { describe, expect, it } from 'vitest';
import { compile, where } from './helpers.js';

function agentWith(model: string) {
  return compile({ 'agents/a.mtr': `instructions = "i"\nmodel = ${JSON.stringify(model)}\n` });
}

describe('the model of an agent', () => {
  it.each([
    'openai:gpt-4o-mini',
    'anthropic:claude-sonnet-4-5',
    'openai-compatible:llama3.1:8b',
    'scripted:refund-demo',
  ])('accepts %s, a known provider with a name', (model) => {
    const repo = agentWith(model);
    expect(repo.diagnostics).toEqual([]);
    expect(repo.agents[0].model).toBe(model);
  });

  it('refuses a misspelt provider with its own code, did you mean, and the list of providers', () => {
    const repo = agentWith('openia:gpt-4o-mini');
    expect(repo.ok).toBe(false);
    expect(where(repo.diagnostics)).toEqual(['agents/a.mtr:2:9 mtr:agent:model-unknown']);
    const [d] = repo.diagnostics;
    expect(d.message).toBe('model "openia:gpt-4o-mini" names the provider openia, which Maitento cannot run');
    expect(d.hint).toBe('did you mean "openai"? the providers are openai, anthropic, openai-compatible and scripted');
  });

  it('refuses a provider nothing resembles without a guess', () => {
    const [d] = agentWith('gemini:gemini-2.5-pro').diagnostics;
    expect(d.code).toBe('mtr:agent:model-unknown');
    expect(d.hint).toBe('the providers are openai, anthropic, openai-compatible and scripted');
  });

  it.each(['gpt-4o', 'openai:', ':gpt-4o', 'openai:gpt 4o', ''])(
    'refuses %j, which is not provider:name, as model-invalid',
    (model) => {
      const repo = agentWith(model);
      expect(where(repo.diagnostics)).toEqual(['agents/a.mtr:2:9 mtr:agent:model-invalid']);
      expect(repo.diagnostics[0].message).toBe(
        `model is ${JSON.stringify(model)}; it must be provider:name, for example "openai:gpt-4o-mini"`,
      );
      expect(repo.diagnostics[0].hint).toBe('the providers are openai, anthropic, openai-compatible and scripted');
    },
  );

  it('names every provider parseModel accepts in both hints', () => {
    for (const code of ['mtr:agent:model-invalid', 'mtr:agent:model-unknown'] as const) {
      const hint = langErrors.create(code, { model: '"x"', provider: 'x', suggestion: '' }).hint ?? '';
      for (const provider of MODEL_PROVIDERS) expect(hint).toContain(provider);
    }
  });

  it('splits a model at its first colon', () => {
    expect(parseModel('openai-compatible:qwen2.5:7b')).toEqual({ provider: 'openai-compatible', name: 'qwen2.5:7b' });
    expect(parseModel('OpenAI:gpt-4o')).toBeUndefined();
  });
});
