import { describe, expect, it } from 'vitest';
import { compile, where } from './helpers.js';

// An interaction's `result.schema` (docs/mtr-language.md "Interactions"): inline or @json, valid JSON Schema, an
// object schema; without it the interaction compiles to what it was before (no `result` key, same version).
const agent = `model = "openai:gpt-4o-mini"
instructions = "Answer."
`;
const interaction = (result: string) => `agent = {
  name = "A"
  agent = @ref("a")
}
task = "Check %%orderId%%"
inputs.prompts = [
  { name = "orderId" required = true }
]
${result}`;

describe("an interaction's result.schema", () => {
  it('compiles an inline schema into the interaction', () => {
    const repo = compile({
      'agents/a.mtr': agent,
      'interactions/one-shot/i.mtr': interaction(`result.schema = {
  type = "object"
  properties = { refunded = { type = "boolean" } amount = { type = "number" } }
  required = ["refunded", "amount"]
}
`),
    });
    expect(repo.diagnostics).toEqual([]);
    expect(repo.interactions[0]?.result).toEqual({
      schema: {
        type: 'object',
        properties: { refunded: { type: 'boolean' }, amount: { type: 'number' } },
        required: ['refunded', 'amount'],
      },
    });
  });

  it('reads a schema from a JSON file of the repo with @json', () => {
    const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };
    const repo = compile({
      'agents/a.mtr': agent,
      'interactions/one-shot/i.mtr': interaction('result.schema = @json("schemas/answer.json")\n'),
      'schemas/answer.json': JSON.stringify(schema),
    });
    expect(repo.diagnostics).toEqual([]);
    expect(repo.interactions[0]?.result).toEqual({ schema });
  });

  it('leaves an interaction without it as it was: no result key', () => {
    const repo = compile({ 'agents/a.mtr': agent, 'interactions/one-shot/i.mtr': interaction('') });
    expect(repo.diagnostics).toEqual([]);
    expect(repo.interactions[0]).not.toHaveProperty('result');
  });

  it('refuses an invalid schema at its wrong value, and a schema that is not of an object', () => {
    const invalid = compile({
      'agents/a.mtr': agent,
      'interactions/one-shot/i.mtr': interaction('result.schema = { type = "objekt" }\n'),
    });
    expect(where(invalid.diagnostics)).toEqual(['interactions/one-shot/i.mtr:9:26 mtr:schema:invalid']);
    const notObject = compile({
      'agents/a.mtr': agent,
      'interactions/one-shot/i.mtr': interaction('result.schema = { type = "string" }\n'),
    });
    expect(where(notObject.diagnostics)).toEqual(['interactions/one-shot/i.mtr:9:17 mtr:schema:invalid']);
    expect(notObject.diagnostics[0]?.message).toContain('has type "string"');
    expect(notObject.diagnostics[0]?.message).toContain('must have type "object"');
  });

  it('refuses result without schema, and an unknown key in result', () => {
    const repo = compile({
      'agents/a.mtr': agent,
      'interactions/one-shot/i.mtr': interaction('result.shape = { type = "object" }\n'),
    });
    expect(repo.ok).toBe(false);
    expect(repo.diagnostics.map((d) => d.code)).toEqual(
      expect.arrayContaining(['mtr:property:required', 'mtr:property:unknown']),
    );
  });
});
