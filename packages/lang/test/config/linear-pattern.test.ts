import { newAjv } from '@maitento/lang/json-schema';
import { describe, expect, it } from 'vitest';
import { linearPatternProblem, re2Source } from '../../src/config/linear-pattern.js';
import { compile, where } from './helpers.js';

// Every `pattern` of a schema runs on RE2 (linear time, decision 0405): the same answers as JavaScript's engine for
// the patterns schemas are written with, none of its exponential cases, and a clear refusal of what RE2 cannot run.

const matcher = (pattern: string) => newAjv('2020-12', { strict: false }).compile({ type: 'string', pattern });

describe('schema patterns on the linear-time engine', () => {
  it.each([
    ['^[a-z]+$', ['abc', 'aBc', '', 'abc1']],
    ['^\\d{3}-\\d{4}$', ['555-1234', '5551234', '555-12345']],
    ['[A-Z]', ['abc', 'abC', '']],
    ['^\\p{L}+$', ['héllo', 'hello1', 'Ωmega']],
    ['\\u00e9', ['café', 'cafe']],
    ['^[\\u0041-\\u005A]+$', ['ABC', 'AbC']],
    ['^\\u{1F600}$', ['😀', '😁']],
    ['^[\\w.+-]+@[\\w-]+\\.[\\w.-]+$', ['a.b+c@example.com', 'nope@', '@x.y']],
    ['^(?<year>\\d{4})-(?<month>\\d{2})$', ['2026-12', '2026-1']],
    ['^\\/v1\\/[a-z-]+$', ['/v1/runs', '/v2/runs']],
    ['^\\S+$', ['token', 'two words']],
    ['^(GET|POST)$', ['GET', 'PUT', 'GETPOST']],
  ])('%s answers as JavaScript does', (pattern, inputs) => {
    const validate = matcher(pattern);
    for (const input of inputs) expect(validate(input), input).toBe(new RegExp(pattern, 'u').test(input));
  });

  it('runs a pathological pattern over hostile text in linear time', () => {
    // Backtracking takes 0.3 s at 26 letters and twice as long for each more; this is 100,000.
    const validate = matcher('^(a+)+$');
    const started = performance.now();
    expect(validate(`${'a'.repeat(100_000)}!`)).toBe(false);
    expect(validate('a'.repeat(100_000))).toBe(true);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('keeps two patterns apart in one schema (ajv keys compiled patterns by their text)', () => {
    const validate = newAjv('draft-07', { strict: false }).compile({
      type: 'object',
      properties: { a: { type: 'string', pattern: '^a+$' }, b: { type: 'string', pattern: '^b+$' } },
      patternProperties: { '^x-': { type: 'number' } },
    });
    expect(validate({ a: 'aa', b: 'bb', 'x-n': 1 })).toBe(true);
    expect(validate({ a: 'bb', b: 'bb' })).toBe(false);
    expect(validate({ a: 'aa', b: 'aa' })).toBe(false);
    expect(validate({ 'x-n': 'one' })).toBe(false);
  });

  it('turns the escapes JavaScript has and RE2 does not into RE2 syntax, and nothing else', () => {
    expect(re2Source('\\u00e9')).toBe('\\x{00e9}');
    expect(re2Source('\\u{1F600}')).toBe('\\x{1F600}');
    expect(re2Source('[\\u0041-\\u005A]')).toBe('[\\x{0041}-\\x{005A}]');
    // An escaped backslash before `u` is a backslash and a letter.
    expect(re2Source('\\\\u00e9')).toBe('\\\\u00e9');
    expect(re2Source('^\\d+\\.\\w$')).toBe('^\\d+\\.\\w$');
    expect(re2Source('trailing\\')).toBe('trailing\\');
  });

  it('says why a pattern cannot run: a lookaround or a back-reference', () => {
    expect(linearPatternProblem('^[a-z]+$')).toBeUndefined();
    expect(linearPatternProblem('^(?=.*\\d)[a-z\\d]+$')).toMatch(/^uses a lookahead or lookbehind, which .*RE2/);
    expect(linearPatternProblem('(?<!x)y')).toMatch(/^uses a lookahead or lookbehind/);
    expect(linearPatternProblem('^(a)\\1$')).toMatch(/^uses a back-reference/);
    expect(linearPatternProblem('^(?<q>["\'])x\\k<q>$')).toMatch(/^uses a back-reference/);
    expect(linearPatternProblem('^(?P<n>x)$')).toBeUndefined();
  });

  it('refuses such a pattern at deploy, at its place, naming why', () => {
    const repo = compile({
      'connectors/open-api/c.mtr': `method = "POST"
url = "https://api.example.com/x"
description = "d"
schema.request = {
  type = "object"
  properties = {
    password = { type = "string" pattern = "^(?=.*[0-9]).{8,}$" }
    code = { type = "string" pattern = "^[A-Z]{2}-[0-9]+$" }
  }
  patternProperties = { "^(x)\\\\1$" = { type = "string" } }
}
`,
    });
    expect(where(repo.diagnostics)).toEqual([
      'connectors/open-api/c.mtr:7:44 mtr:schema:invalid',
      'connectors/open-api/c.mtr:10:38 mtr:schema:invalid',
    ]);
    expect(repo.diagnostics.map((d) => d.message)).toEqual([
      expect.stringContaining('pattern "^(?=.*[0-9]).{8,}$" uses a lookahead or lookbehind'),
      expect.stringContaining('"^(x)\\\\1$" uses a back-reference'),
    ]);
  });
});
