import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../src/index.js';
import { didYouMean, editDistance, formatDiagnostic, formatDiagnostics, parseMtr } from '../../src/index.js';

const refUnknown: Diagnostic = {
  code: 'mtr:ref:unknown',
  severity: 'error',
  message: '@ref("suport-agent") names nothing',
  file: 'agents/support.mtr',
  line: 12,
  column: 7,
  endLine: 12,
  endColumn: 27,
  hint: 'did you mean "support-agent"?',
};

describe('formatDiagnostic', () => {
  it('prints file:line:column, severity, code and message, the source line, a caret underline and the hint', () => {
    const source = `${'// filler\n'.repeat(11)}functions = [ { ref = @ref("suport-agent") } ]\n`;
    expect(formatDiagnostic(refUnknown, source)).toBe(
      [
        'agents/support.mtr:12:7 error mtr:ref:unknown @ref("suport-agent") names nothing',
        '   12 | functions = [ { ref = @ref("suport-agent") } ]',
        '      |       ^^^^^^^^^^^^^^^^^^^^',
        '   hint: did you mean "support-agent"?',
      ].join('\n'),
    );
  });

  it('underlines one character when the diagnostic has no end, and keeps tabs aligned', () => {
    const d: Diagnostic = { code: 'mtr:x:y', severity: 'warning', message: 'm', file: 'f.mtr', line: 1, column: 3 };
    expect(formatDiagnostic(d, '\tab = 1')).toBe('f.mtr:1:3 warning mtr:x:y m\n    1 | \tab = 1\n      | \t ^');
  });

  it('underlines to the end of the line for a span that runs onto later lines', () => {
    const d: Diagnostic = { ...refUnknown, line: 1, column: 5, endLine: 3, endColumn: 2, hint: undefined };
    const text = formatDiagnostic(d, 'a = {\n b = 1\n}');
    expect(text.split('\n').slice(1)).toEqual(['    1 | a = {', '      |     ^']);
  });

  it('prints only the header when the line is not in the source', () => {
    const d: Diagnostic = { ...refUnknown, hint: undefined };
    expect(formatDiagnostic(d, 'one line')).toBe(
      'agents/support.mtr:12:7 error mtr:ref:unknown @ref("suport-agent") names nothing',
    );
  });

  it('shows a window of a very long line around the column, and control characters as U+FFFD', () => {
    const line = `${'x'.repeat(300)}\u0000${'y'.repeat(300)}`;
    const d: Diagnostic = { code: 'mtr:x:y', severity: 'error', message: 'm', file: 'f', line: 1, column: 301 };
    const [, shown, carets] = formatDiagnostic(d, line).split('\n');
    expect(shown.length).toBeLessThan(140);
    expect(shown).toContain('...x');
    expect(shown).toContain('\ufffd');
    expect(carets.indexOf('^')).toBe(shown.indexOf('\ufffd'));
  });

  it('renders the parser diagnostics of a broken file at the right place', () => {
    const source = 'method = "GET"\nurl = \n';
    const { diagnostics } = parseMtr(source, 'c.mtr');
    expect(formatDiagnostics(diagnostics, new Map([['c.mtr', source]]))).toBe(
      [
        'c.mtr:2:6 error mtr:syntax:unexpected-token expected a value after `=`, found the end of the file',
        '    2 | url = ',
        '      |      ^',
      ].join('\n'),
    );
  });
});

describe('formatDiagnostics', () => {
  it('renders each diagnostic with its own file source, separated by blank lines', () => {
    const a: Diagnostic = { code: 'mtr:x:a', severity: 'error', message: 'first', file: 'a.mtr', line: 1, column: 1 };
    const b: Diagnostic = { code: 'mtr:x:b', severity: 'error', message: 'second', file: 'b.mtr', line: 2, column: 2 };
    const out = formatDiagnostics(
      [a, b],
      new Map([
        ['a.mtr', 'alpha'],
        ['b.mtr', 'one\r\ntwo'],
      ]),
    );
    expect(out).toBe(
      [
        'a.mtr:1:1 error mtr:x:a first',
        '    1 | alpha',
        '      | ^',
        '',
        'b.mtr:2:2 error mtr:x:b second',
        '    2 | two',
        '      |  ^',
      ].join('\n'),
    );
  });
});

describe('didYouMean', () => {
  it('suggests the closest candidate within a small edit distance', () => {
    expect(didYouMean('suport-agent', ['weather-agent', 'support-agent', 'handbook'])).toBe('support-agent');
    expect(didYouMean('methdo', ['method', 'url', 'description'])).toBe('method');
    expect(didYouMean('requiresAproval', ['requiresApproval', 'guidance'])).toBe('requiresApproval');
  });

  it('ignores case when comparing and suggests nothing for a distant word', () => {
    expect(didYouMean('GUIDANCE', ['guidance'])).toBe('guidance');
    expect(didYouMean('banana', ['method', 'url'])).toBeUndefined();
    expect(didYouMean('x', [])).toBeUndefined();
  });

  it('counts an adjacent swap as one edit', () => {
    expect(editDistance('recieve', 'receive')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('abc', 'abcdefgh', 2)).toBe(3);
  });
});
