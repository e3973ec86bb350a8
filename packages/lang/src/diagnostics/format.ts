import type { Diagnostic } from './diagnostic.js';

// Compiler-style rendering of diagnostics:
//
//   agents/support.mtr:12:7 error mtr:ref:unknown @ref("suport-agent") names nothing
//      12 | functions = [ { ref = @ref("suport-agent") } ]
//         |       ^^^^^^^^^^^^^^^^^^^^
//      hint: did you mean "support-agent"?

const GUTTER = 5;
// Lines longer than this are shown as a window around the column, so a minified line stays readable.
const WINDOW = 120;
const LINE_BREAK = /\r\n|\r|\n/;

/** Splits source text into lines the way the lexer counts them (`\n`, `\r\n` and a lone `\r`). */
export function sourceLines(source: string): string[] {
  return source.split(LINE_BREAK);
}

/** Renders one diagnostic with its source line and a caret underline; `source` is the file's text. */
export function formatDiagnostic(d: Diagnostic, source: string | string[] | undefined): string {
  const lines = typeof source === 'string' ? sourceLines(source) : source;
  const out = [`${d.file}:${d.line}:${d.column} ${d.severity} ${d.code} ${d.message}`];
  const text = lines?.[d.line - 1];
  if (text !== undefined) {
    const startIndex = Math.max(0, Math.min(d.column - 1, text.length));
    // No end: one caret. An end on a later line: underline to the end of this line.
    let endIndex =
      d.endColumn === undefined
        ? startIndex + 1
        : d.endLine !== undefined && d.endLine > d.line
          ? text.length
          : d.endColumn - 1;
    endIndex = Math.min(Math.max(endIndex, startIndex + 1), Math.max(text.length, startIndex + 1));
    const from = text.length > WINDOW ? Math.max(0, Math.min(startIndex - 40, text.length - WINDOW)) : 0;
    const to = Math.min(text.length, from + WINDOW);
    const shown = printable(text.slice(from, to));
    const before = from > 0 ? '...' : '';
    const after = to < text.length ? '...' : '';
    const caretStart = startIndex - from;
    const caretLength = Math.max(1, Math.min(endIndex, to + 1) - startIndex);
    const pad = text
      .slice(from, from + caretStart)
      .replace(/[^\t]/g, ' ')
      .padEnd(caretStart, ' ');
    out.push(`${String(d.line).padStart(GUTTER)} | ${before}${shown}${after}`);
    out.push(`${' '.repeat(GUTTER)} | ${' '.repeat(before.length)}${pad}${'^'.repeat(caretLength)}`);
  }
  if (d.hint !== undefined) out.push(`   hint: ${d.hint}`);
  return out.join('\n');
}

/** Renders a list of diagnostics, each with its file's source line, separated by blank lines. */
export function formatDiagnostics(list: readonly Diagnostic[], sources: ReadonlyMap<string, string>): string {
  const split = new Map<string, string[]>();
  const blocks: string[] = [];
  for (const d of list) {
    let lines = split.get(d.file);
    if (lines === undefined) {
      const source = sources.get(d.file);
      if (source !== undefined) {
        lines = sourceLines(source);
        split.set(d.file, lines);
      }
    }
    blocks.push(formatDiagnostic(d, lines));
  }
  return blocks.join('\n\n');
}

// Control characters would garble a terminal: each becomes one replacement character, so carets still line up.
function printable(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '\ufffd');
}
