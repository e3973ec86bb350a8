import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Assignment, FileNode, ValueNode } from '../../src/index.js';
import { formatMtr, parseMtr } from '../../src/index.js';

const langTest = fileURLToPath(new URL('..', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));

function mtrFiles(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === '.git' || name === 'dist') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...mtrFiles(path));
    else if (name.endsWith('.mtr')) found.push(path);
  }
  return found;
}

// Every .mtr fixture of the lang tests, and the example config repo at the root of the repository.
const fixtures = [
  ...mtrFiles(langTest),
  ...['connectors', 'external-operations', 'agents', 'interactions'].flatMap((dir) => {
    try {
      return mtrFiles(join(repoRoot, dir));
    } catch {
      return [];
    }
  }),
]
  .map((path) => ({ name: relative(repoRoot, path), text: readFileSync(path, 'utf8') }))
  .filter((f) => parseMtr(f.text, f.name).diagnostics.length === 0);

// The AST without positions, and strings without their raw text (which the formatter re-escapes).
function meaning(ast: FileNode): unknown {
  const value = (v: ValueNode): unknown => {
    switch (v.kind) {
      case 'String':
        return { s: v.value };
      case 'Number':
        return { n: v.raw };
      case 'Boolean':
        return { b: v.value };
      case 'Null':
        return null;
      case 'Array':
        return v.elements.map(value);
      case 'Object':
        return v.entries.map(assignment);
      case 'Directive':
        return { d: v.name, args: v.args.map((a) => a.value) };
    }
  };
  const assignment = (a: Assignment) => ({
    key: a.key.segments.map((s) => ({ name: s.name, qualifier: s.qualifier, quoted: s.quoted })),
    value: value(a.value),
  });
  return { assignments: ast.assignments.map(assignment), comments: ast.comments.map((c) => c.text.trimEnd()) };
}

describe('formatMtr on every fixture', () => {
  it('has fixtures to check, the seed examples among them', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(8);
    expect(fixtures.some((f) => f.name.endsWith('seed/connectors/open-api/open-meteo-forecast.mtr'))).toBe(true);
  });

  for (const fixture of fixtures) {
    it(`is idempotent and keeps the meaning of ${fixture.name}`, () => {
      const once = formatMtr(fixture.text, fixture.name);
      expect(once.diagnostics).toEqual([]);
      expect(formatMtr(once.text, fixture.name).text).toBe(once.text);
      expect(meaning(parseMtr(once.text, fixture.name).ast)).toEqual(meaning(parseMtr(fixture.text, fixture.name).ast));
    });
  }
});

describe('formatMtr layout', () => {
  const fmt = (text: string) => {
    const result = formatMtr(text, 'f.mtr');
    expect(result.diagnostics).toEqual([]);
    return result.text;
  };

  it('leaves the seed connector, tool and interactions exactly as written', () => {
    for (const path of [
      'connectors/open-api/open-meteo-forecast.mtr',
      'external-operations/open-api/current-weather.mtr',
      'interactions/one-shot/ask-handbook.mtr',
      'interactions/one-shot/support-any-shop.mtr',
    ]) {
      const text = readFileSync(join(langTest, 'fixtures/seed', path), 'utf8');
      expect(fmt(text)).toBe(text);
    }
  });

  it('puts one assignment per line with spaces around =', () => {
    expect(fmt('a=1 b  =  "x"\n\n\n\nc= true')).toBe('a = 1\nb = "x"\n\nc = true\n');
  });

  it('writes arrays of objects one element per line, without a trailing comma', () => {
    expect(fmt('functions = [ { ref = @ref("current-weather") } ]')).toBe(
      'functions = [\n  { ref = @ref("current-weather") }\n]\n',
    );
  });

  it('keeps short scalar arrays on one line and breaks long ones', () => {
    expect(fmt('a = [\n  1,\n  2,\n]')).toBe('a = [1, 2]\n');
    const long = `a = [${Array.from({ length: 12 }, (_, i) => `"value-${i}"`).join(', ')}]`;
    expect(fmt(long)).toBe(`a = [\n${Array.from({ length: 12 }, (_, i) => `  "value-${i}"`).join(',\n')}\n]\n`);
  });

  it('keeps a one-line object on one line when it fits, and breaks it when it does not', () => {
    expect(fmt('auth = {header="X-Api-Key"   secret=@ref("my-secret")}')).toBe(
      'auth = { header = "X-Api-Key" secret = @ref("my-secret") }\n',
    );
    const wide = `o = { a = "${'x'.repeat(60)}" b = "${'y'.repeat(40)}" }`;
    expect(fmt(wide)).toBe(`o = {\n  a = "${'x'.repeat(60)}"\n  b = "${'y'.repeat(40)}"\n}\n`);
  });

  it('keeps an object written over several lines on several lines', () => {
    expect(fmt('agent = {\n name = "x"\n}')).toBe('agent = {\n  name = "x"\n}\n');
  });

  it('keeps own-line comments before what they precede and trailing comments after it', () => {
    expect(fmt('// top\na = 1   // one\no = {\n      // inside\n  b = 2 // two\n}\n// end')).toBe(
      '// top\na = 1 // one\no = {\n  // inside\n  b = 2 // two\n}\n// end\n',
    );
  });

  it('breaks an object or array that holds a comment', () => {
    expect(fmt('o = { a = 1 // why\n b = 2 }')).toBe('o = {\n  a = 1 // why\n  b = 2\n}\n');
    expect(fmt('a = [1, // first\n 2]')).toBe('a = [\n  1, // first\n  2\n]\n');
  });

  it('keeps number text and re-escapes strings canonically', () => {
    expect(fmt('n = [1.50, -0, 2E3]\ns = "\\u0041\\/\\u00e9\\u0001\\ud800"')).toBe(
      'n = [1.50, -0, 2E3]\ns = "A/é\\u0001\\ud800"\n',
    );
  });

  it('writes LF line endings and drops a byte-order mark', () => {
    expect(fmt('\uFEFFa = 1\r\nb = 2\rc = 3')).toBe('a = 1\nb = 2\nc = 3\n');
  });

  it('keeps quoted keys quoted and bare keys bare', () => {
    expect(fmt('"x-request-id" = 1\nx-request-id = 2\nbindings.request:"a b" = 3')).toBe(
      '"x-request-id" = 1\nx-request-id = 2\nbindings.request:"a b" = 3\n',
    );
  });

  it('refuses a file with syntax errors: original text back, with the diagnostics', () => {
    const broken = 'a = [1, 2\nb = = 3\n';
    const result = formatMtr(broken, 'broken.mtr');
    expect(result.text).toBe(broken);
    expect(result.diagnostics.map((d) => d.line)).toEqual([1, 2]);
  });

  it('formats an empty file to an empty file', () => {
    expect(fmt('')).toBe('');
    expect(fmt('\n\n')).toBe('');
  });
});
