import { type ErrorParams, type SharedErrorCode, sharedErrors } from '@maitento/errors';
import type { Diagnostic, Severity } from '../diagnostics/diagnostic.js';
import { langErrors } from '../errors.js';
import type { Span } from '../syntax/ast.js';

/** A code of the `@maitento/lang` registry. */
export type LangCode = ReturnType<typeof langErrors.codes>[number];

/** Where the config compiler collects its diagnostics. */
export interface Reporter {
  readonly diagnostics: Diagnostic[];
  /** Adds a diagnostic made from a registry code (lang's or a shared one), its message and hint rendered from `params`. */
  report(
    code: LangCode | SharedErrorCode,
    params: ErrorParams,
    file: string,
    span: Span | undefined,
    severity?: Severity,
  ): void;
  /** Adds a diagnostic whose code belongs to another package's registry (such as `@maitento/egress`). */
  reportRaw(code: string, message: string, file: string, span: Span | undefined, hint?: string): void;
}

/** The position used when nothing more precise is known: the first character of the file. */
export const FILE_START: Span = {
  start: { offset: 0, line: 1, column: 1 },
  end: { offset: 0, line: 1, column: 1 },
};

function place(d: Omit<Diagnostic, 'line' | 'column'>, span: Span | undefined): Diagnostic {
  const s = span ?? FILE_START;
  const out: Diagnostic = { ...d, line: s.start.line, column: s.start.column };
  if (s.end.offset > s.start.offset) {
    out.endLine = s.end.line;
    out.endColumn = s.end.column;
  }
  return out;
}

/** Creates a {@link Reporter} that keeps diagnostics in order of arrival. */
export function createReporter(): Reporter {
  const diagnostics: Diagnostic[] = [];
  return {
    diagnostics,
    report(code, params, file, span, severity = 'error') {
      const err = sharedErrors.has(code) ? sharedErrors.create(code, params) : langErrors.create(code, params);
      const d = place({ code, severity, message: err.message, file }, span);
      if (err.hint) d.hint = err.hint;
      diagnostics.push(d);
    },
    reportRaw(code, message, file, span, hint) {
      const d = place({ code, severity: 'error', message, file }, span);
      if (hint) d.hint = hint;
      diagnostics.push(d);
    },
  };
}

/** Sorts diagnostics by file, line and column, keeping the order of arrival among equals. */
export function sortDiagnostics(diagnostics: Diagnostic[]): Diagnostic[] {
  return diagnostics
    .map((d, i) => ({ d, i }))
    .sort(
      (a, b) =>
        (a.d.file < b.d.file ? -1 : a.d.file > b.d.file ? 1 : 0) ||
        a.d.line - b.d.line ||
        a.d.column - b.d.column ||
        a.i - b.i,
    )
    .map((x) => x.d);
}

/** A span covering the part `[from, to)` of a one-line string literal, given as offsets into its value. */
export function spanInString(literal: Span, raw: string | undefined, needle: string, occurrence = 0): Span {
  if (raw === undefined || literal.start.line !== literal.end.line) return literal;
  let index = -1;
  for (let n = 0; n <= occurrence; n++) {
    index = raw.indexOf(needle, index + 1);
    if (index < 0) return literal;
  }
  // `raw` includes the opening quote, so the value's offsets map one to one when it has no escapes.
  const startColumn = literal.start.column + index;
  return {
    start: { offset: literal.start.offset + index, line: literal.start.line, column: startColumn },
    end: {
      offset: literal.start.offset + index + needle.length,
      line: literal.start.line,
      column: startColumn + needle.length,
    },
  };
}

/** Says "did you mean ...?" for a list of suggestions, or returns an empty string. */
export function didYouMeanText(suggestion: string | undefined): string {
  return suggestion ? `did you mean "${suggestion}"?` : '';
}
