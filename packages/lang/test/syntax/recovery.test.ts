import { describe, expect, it } from 'vitest';
import { MAX_NESTING, parseMtr } from '../../src/index.js';

const at = (text: string) =>
  parseMtr(text, 'broken.mtr').diagnostics.map((d) => [d.line, d.column, d.code, d.message] as const);

describe('parseMtr error recovery', () => {
  it('reports three broken lines as three diagnostics and keeps the assignments that parsed', () => {
    const text = [
      'method "GET"',
      'url = "https://api.example.com/v1"',
      'description =',
      'parameters.query = [1, 2',
      'auth = "None"',
    ].join('\n');
    const { ast, diagnostics } = parseMtr(text, 'connectors/open-api/x.mtr');
    expect(diagnostics.map((d) => [d.line, d.column, d.message])).toEqual([
      [1, 8, 'expected `=` after the key `method`, found `"GET"`'],
      [3, 14, 'expected a value after `=`, found `parameters` on line 4'],
      [4, 25, 'expected `,` or `]` after an array element, found `auth` on line 5'],
    ]);
    expect(
      diagnostics.every((d) => d.code === 'mtr:syntax:unexpected-token' && d.file === 'connectors/open-api/x.mtr'),
    ).toBe(true);
    expect(ast.assignments.map((a) => a.key.segments[0].name)).toEqual(['method', 'url', 'parameters', 'auth']);
  });

  it('names a dotted key in a missing-= message', () => {
    expect(at('inputs.functions.binding [ ]')[0][3]).toBe(
      'expected `=` after the key `inputs.functions.binding`, found `[`',
    );
  });

  it('names the key in a missing-= message when the file ends right after it, as the only or the last token', () => {
    // The parser pads the token array it parses with end-of-file sentinels (chevrotain 13); the key is still found.
    expect(at('mode')).toEqual([
      [1, 5, 'mtr:syntax:unexpected-token', 'expected `=` after the key `mode`, found the end of the file'],
    ]);
    expect(at('mode\n')[0][3]).toBe('expected `=` after the key `mode`, found the end of the file');
    expect(at('a = 1\nsum.mary')[0][3]).toBe('expected `=` after the key `sum.mary`, found the end of the file');
  });

  it('skips a line that starts with junk and goes on with the next', () => {
    const { ast, diagnostics } = parseMtr('a = 1\n= 2\n} b\nc = 3', 'j.mtr');
    expect(diagnostics.map((d) => [d.line, d.column])).toEqual([
      [2, 1],
      [3, 1],
    ]);
    expect(ast.assignments.map((a) => a.key.segments[0].name)).toEqual(['a', 'c']);
  });

  it('reports a bare word value once, asking for quotes', () => {
    expect(at('method = GET\nurl = "u"')).toEqual([
      [
        1,
        10,
        'mtr:syntax:unexpected-token',
        'expected a value, found the bare word `GET`: write a string in double quotes, "GET"',
      ],
    ]);
  });

  it('reports a missing } at the end of the file after the last real token', () => {
    expect(at('agent = {\n  name = "x"\n')).toEqual([
      [2, 13, 'mtr:syntax:unexpected-token', 'expected `key = value` or `}` in an object, found the end of the file'],
    ]);
  });

  it('reports a comma between object entries', () => {
    const d = at('o = { a = 1, b = 2 }');
    expect(d).toHaveLength(1);
    expect(d[0].slice(0, 2)).toEqual([1, 12]);
  });

  it('reports errors in nested values with their own line and column, recovering inside the array', () => {
    const { ast } = parseMtr('list = [\n  { name = "a" },\n  { name = },\n  { name = "c" ,\n]\nnext = 1', 'n.mtr');
    expect(ast.assignments.map((a) => a.key.segments[0].name)).toEqual(['list', 'next']);
    const d = at('list = [\n  { name = "a" },\n  { name = },\n  { name = "c" ,\n]');
    expect(d.map((x) => x.slice(0, 2))).toEqual([
      [3, 12],
      [4, 16],
    ]);
  });

  it('reports no escape or key problem inside an entry that recovery gave up on, and keeps those of entries that parsed', () => {
    // The entry `"\q" =` of the object has no value: it is dropped, with the bad escape in its key.
    expect(at('a = { "\\q" = }\nb = 1').map(([line, column, code]) => [line, column, code])).toEqual([
      [1, 14, 'mtr:syntax:unexpected-token'],
    ]);
    // The whole top-level assignment is given up at the end of the file: its key's `/` is not reported either.
    const open = parseMtr('a.b/c = { x = 1 \n', 'open.mtr');
    expect(open.diagnostics.map((d) => d.code)).toEqual(['mtr:syntax:unexpected-token']);
    expect(open.ast.assignments).toEqual([]);
    // An entry that parsed keeps its bad escape, though the object around it is broken later.
    expect(at('a = { b = "\\q" c }').map(([line, column, code]) => [line, column, code])).toEqual([
      [1, 12, 'mtr:syntax:invalid-escape'],
      [1, 18, 'mtr:syntax:unexpected-token'],
    ]);
  });
});

describe('parseMtr lexical errors', () => {
  it('reports an unterminated string and still parses the lines after it', () => {
    const { ast, diagnostics } = parseMtr('a = "open\nb = 2', 's.mtr');
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({ code: 'mtr:syntax:unterminated-string', line: 1, column: 5, endColumn: 10 });
    expect(ast.assignments.map((a) => a.key.segments[0].name)).toEqual(['a', 'b']);
  });

  it('reports each invalid escape at its column', () => {
    const { diagnostics } = parseMtr('a = "x\\qy\\u12zz"', 'e.mtr');
    expect(diagnostics.map((d) => [d.code, d.column, d.endColumn])).toEqual([
      ['mtr:syntax:invalid-escape', 7, 9],
      ['mtr:syntax:invalid-escape', 10, 16],
    ]);
  });

  it('reports a stray character, naming invisible ones', () => {
    expect(at('a = 1;\nb = 2')).toEqual([[1, 6, 'mtr:syntax:unexpected-character', 'unexpected character `;`']]);
    expect(at('a = 1\u0000')[0][3]).toBe('unexpected character U+0000');
  });

  it('refuses nesting deeper than the limit with one too-deep diagnostic and no stack overflow', () => {
    const deep = `a = ${'['.repeat(MAX_NESTING + 1)}${']'.repeat(MAX_NESTING + 1)}\nb = 1`;
    const { ast, diagnostics } = parseMtr(deep, 'd.mtr');
    expect(diagnostics.map((d) => [d.code, d.line, d.column])).toEqual([['mtr:syntax:too-deep', 1, 5 + MAX_NESTING]]);
    expect(ast.assignments.map((a) => a.key.segments[0].name)).toEqual(['a', 'b']);
    const ok = parseMtr(`a = ${'['.repeat(MAX_NESTING)}${']'.repeat(MAX_NESTING)}`, 'ok.mtr');
    expect(ok.diagnostics).toEqual([]);
  });

  it('survives a megabyte of [ quickly', () => {
    const started = performance.now();
    const { diagnostics } = parseMtr('['.repeat(1 << 20), 'big.mtr');
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(diagnostics.some((d) => d.code === 'mtr:syntax:too-deep')).toBe(true);
  });

  it('stops after 100 parser errors with a final diagnostic', () => {
    const { diagnostics } = parseMtr('""\n'.repeat(2000), 'many.mtr');
    expect(diagnostics.length).toBeLessThanOrEqual(102);
    expect(diagnostics.at(-1)?.message).toMatch(/more than 100 syntax errors/);
  });
});
