import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { costOf, parsePriceTable, priceOf, priceTableFromEnv } from './prices.js';

describe('the price table (MT_MODEL_PRICES)', () => {
  const saved = process.env.MT_MODEL_PRICES;
  afterEach(() => {
    if (saved === undefined) delete process.env.MT_MODEL_PRICES;
    else process.env.MT_MODEL_PRICES = saved;
  });

  it('prices a model by its own entry, else by its provider’s `provider:*`', () => {
    const table = parsePriceTable(
      '{"openai:gpt-4o": {"input": 2.5, "output": 10}, "openai:*": {"input": 1, "output": 2}, "scripted:*": {"input": 0, "output": 0}}',
    );
    expect(priceOf(table, 'openai:gpt-4o')).toEqual({ input: 2.5, output: 10 });
    expect(priceOf(table, 'openai:gpt-4o-mini')).toEqual({ input: 1, output: 2 });
    expect(priceOf(table, 'anthropic:claude-sonnet-4-5')).toBeUndefined();
    expect(costOf(table, 'scripted:support', { inputTokens: 5, outputTokens: 5 })).toBe(0);
  });

  it('computes USD per million tokens; tokens a provider did not report count as 0', () => {
    const table = parsePriceTable('{"openai:gpt-4o": {"input": 2.5, "output": 10}}');
    expect(costOf(table, 'openai:gpt-4o', { inputTokens: 1_000_000, outputTokens: 0 })).toBe(2.5);
    expect(costOf(table, 'openai:gpt-4o', { inputTokens: 300, outputTokens: 100 })).toBe(0.00175);
    expect(costOf(table, 'openai:gpt-4o', { inputTokens: null, outputTokens: 1000 })).toBe(0.01);
    expect(costOf(table, 'openai:gpt-4o', { inputTokens: null, outputTokens: null })).toBe(0);
    expect(costOf(table, 'openai:o3', { inputTokens: 10, outputTokens: 10 })).toBeNull();
  });

  it('refuses a table it cannot trust, naming what is wrong', () => {
    const refused = (text: string) => {
      try {
        parsePriceTable(text);
      } catch (error) {
        expect((error as { code?: string }).code).toBe('api:models:prices-invalid');
        return (error as Error).message;
      }
      throw new Error(`accepted ${text}`);
    };
    expect(refused('{oops')).toContain('not JSON');
    expect(refused('[1]')).toContain('JSON object');
    expect(refused('{"gpt-4o": {"input": 1, "output": 1}}')).toContain('not provider:name');
    expect(refused('{"openai:gpt-4o": {"input": -1, "output": 1}}')).toContain('input must be a number');
    expect(refused('{"openai:gpt-4o": {"input": 1}}')).toContain('output must be a number');
    expect(refused('{"openai:gpt-4o": {"input": "1", "output": 1}}')).toContain('input must be a number');
    expect(refused('{"openai:gpt-4o": {"input": 1, "output": 1, "cached": 0.5}}')).toContain('unknown field cached');
  });

  it('reads the JSON from the variable, or from the file it names; unset is an empty table', async () => {
    delete process.env.MT_MODEL_PRICES;
    expect(priceTableFromEnv().size).toBe(0);
    process.env.MT_MODEL_PRICES = '{"openai:gpt-4o": {"input": 2.5, "output": 10}}';
    expect(priceOf(priceTableFromEnv(), 'openai:gpt-4o')).toEqual({ input: 2.5, output: 10 });
    const dir = await mkdtemp(join(tmpdir(), 'mt-prices-'));
    try {
      const file = join(dir, 'prices.json');
      await writeFile(file, '{"anthropic:*": {"input": 3, "output": 15}}');
      process.env.MT_MODEL_PRICES = file;
      expect(priceOf(priceTableFromEnv(), 'anthropic:claude-sonnet-4-5')).toEqual({ input: 3, output: 15 });
      process.env.MT_MODEL_PRICES = join(dir, 'missing.json');
      expect(() => priceTableFromEnv()).toThrow(/cannot read the file .*missing\.json: ENOENT/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
