import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatMtr, parseMtr } from '../../src/index.js';

// Seeded, deterministic fuzzing of parseMtr (and of formatMtr on whatever still parses): every input
// must come back with diagnostics or none, never a throw, each diagnostic with a code and a position.

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const seedDir = fileURLToPath(new URL('../fixtures/seed/', import.meta.url));
function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : name.endsWith('.mtr') ? [path] : [];
  });
}
const fixtures = files(seedDir).map((path) => readFileSync(path, 'utf8'));

interface Outcome {
  problems: string[];
  cases: number;
  clean: number;
}

function check(text: string, outcome: Outcome, label: string): void {
  outcome.cases++;
  try {
    const { ast, diagnostics } = parseMtr(text, 'fuzz.mtr');
    if (!Array.isArray(ast.assignments)) outcome.problems.push(`${label}: no assignments array`);
    for (const d of diagnostics) {
      const ok =
        /^mtr:[a-z-]+:[a-z-]+$/.test(d.code) &&
        Number.isInteger(d.line) &&
        Number.isInteger(d.column) &&
        d.line >= 1 &&
        d.column >= 1 &&
        typeof d.message === 'string' &&
        d.message.length > 0;
      if (!ok) outcome.problems.push(`${label}: bad diagnostic ${JSON.stringify(d)}`);
    }
    if (diagnostics.length === 0) {
      outcome.clean++;
      const once = formatMtr(text, 'fuzz.mtr');
      const twice = formatMtr(once.text, 'fuzz.mtr');
      if (once.diagnostics.length > 0 || twice.text !== once.text) {
        outcome.problems.push(`${label}: formatting is not stable for ${JSON.stringify(text.slice(0, 200))}`);
      }
    }
  } catch (error) {
    outcome.problems.push(
      `${label}: threw ${(error as Error).stack ?? error} for ${JSON.stringify(text.slice(0, 200))}`,
    );
  }
}

const ALPHABET = [
  ...'abcxyz_-019 \t\n\r"\\/=.,:[]{}()@%$;#\u0000\u00e9\ufeff\u2028',
  '\ud800',
  '\udc00',
  '\ud83d\ude00',
  '//',
  '\r\n',
];

const TOKENS = [
  'a',
  'method',
  'x-request-id',
  'bindings',
  'query:current',
  'request:address/city',
  '"str"',
  '"esc\\n\\u00e9"',
  '"bad\\q"',
  '"open',
  '0',
  '-1.5e3',
  '42',
  'true',
  'false',
  'null',
  '@ref',
  '@json',
  '("x")',
  '=',
  '.',
  ':',
  ',',
  '[',
  ']',
  '{',
  '}',
  '(',
  ')',
  '// note',
  '\n',
  ' ',
];

describe('parseMtr fuzzing (seeded)', () => {
  it('never throws on random text, token soup, truncations and single-character mutations of the seed files', () => {
    const random = mulberry32(0x5eed);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
    const outcome: Outcome = { problems: [], cases: 0, clean: 0 };
    const started = performance.now();

    for (let i = 0; i < 2000; i++) {
      const length = Math.floor(random() * 120);
      let text = '';
      for (let j = 0; j < length; j++) {
        text += random() < 0.2 ? String.fromCharCode(Math.floor(random() * 0x10000)) : pick(ALPHABET);
      }
      check(text, outcome, `random #${i}`);
    }

    for (let i = 0; i < 3000; i++) {
      const count = 1 + Math.floor(random() * 40);
      const parts: string[] = [];
      for (let j = 0; j < count; j++) parts.push(pick(TOKENS));
      check(parts.join(random() < 0.5 ? ' ' : ''), outcome, `soup #${i}`);
    }

    const replacements = ['"', '[', '{', '=', '\n', '\\'];
    fixtures.forEach((text, f) => {
      for (let at = 0; at <= text.length; at++) {
        check(text.slice(0, at), outcome, `fixture ${f} cut at ${at}`);
        if (at === text.length) continue;
        check(text.slice(0, at) + text.slice(at + 1), outcome, `fixture ${f} delete ${at}`);
        check(text.slice(0, at) + text[at] + text.slice(at), outcome, `fixture ${f} duplicate ${at}`);
        const replacement = replacements[at % replacements.length];
        check(text.slice(0, at) + replacement + text.slice(at + 1), outcome, `fixture ${f} replace ${at}`);
      }
    });

    expect(outcome.problems.slice(0, 5)).toEqual([]);
    expect(outcome.cases).toBeGreaterThanOrEqual(10_000);
    // Some mutations still parse; those went through the formatter check too.
    expect(outcome.clean).toBeGreaterThan(100);
    expect(performance.now() - started).toBeLessThan(20_000);
  });
});
