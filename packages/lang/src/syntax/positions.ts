import type { IToken } from 'chevrotain';
import { langErrors } from '../errors.js';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import type { Position, Span } from './ast.js';

/** The position just after the last character of `text` (1-based line and column). */
export function endOfText(text: string): Position {
  let line = 1;
  let lineStart = 0;
  if (!text.includes('\r')) {
    // The common case, only \n line breaks: indexOf is much faster than a loop over every character.
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', lineStart)) {
      line++;
      lineStart = i + 1;
    }
    return { offset: text.length, line, column: text.length - lineStart + 1 };
  }
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || (c === 13 && text.charCodeAt(i + 1) !== 10)) {
      line++;
      lineStart = i + 1;
    }
  }
  return { offset: text.length, line, column: text.length - lineStart + 1 };
}

/** True when chevrotain gave the token a real place: tokens inserted by error recovery and EOF have NaN. */
export function hasPosition(token: IToken | undefined): token is IToken {
  return (
    token !== undefined &&
    Number.isFinite(token.startOffset) &&
    Number.isFinite(token.startLine) &&
    Number.isFinite(token.startColumn) &&
    (token.startLine ?? 0) >= 1 &&
    (token.startColumn ?? 0) >= 1
  );
}

/** The start of a positioned token. */
export function startOf(token: IToken): Position {
  return { offset: token.startOffset, line: token.startLine as number, column: token.startColumn as number };
}

/** The exclusive end of a positioned token: tokens never span lines, so it is the start plus the image's length. */
export function endOf(token: IToken): Position {
  const length = token.image.length;
  return {
    offset: token.startOffset + length,
    line: token.startLine as number,
    column: (token.startColumn as number) + length,
  };
}

/** Where a syntax problem is: the token itself, or right after the token before it, or the end of the file. */
export interface Anchor {
  token?: IToken;
  previous?: IToken;
}

/**
 * The one place chevrotain positions become a diagnostic. It copes with the tokens chevrotain makes
 * up (EOF and tokens inserted by recovery carry NaN positions) by falling back to the end of the
 * previous token, then to the end of the file, so every diagnostic has a line and a column ≥ 1.
 */
export function syntaxDiagnostic(
  code: keyof typeof langErrors.specs & string,
  message: string,
  file: string,
  anchor: Anchor,
  endOfFile: Position,
): Diagnostic {
  let span: Span;
  // A token missing at the end of a line (`url =` and then the next key) is reported where it is
  // missing, right after the previous token, not at the next line's first token.
  const missingAtLineEnd =
    hasPosition(anchor.token) &&
    hasPosition(anchor.previous) &&
    (anchor.token.startLine as number) > (anchor.previous.startLine as number);
  if (hasPosition(anchor.token) && !missingAtLineEnd) {
    span = { start: startOf(anchor.token), end: endOf(anchor.token) };
  } else if (hasPosition(anchor.previous)) {
    const end = endOf(anchor.previous);
    span = { start: end, end: { ...end, column: end.column + 1 } };
  } else {
    span = { start: endOfFile, end: { ...endOfFile, column: endOfFile.column + 1 } };
  }
  return spanDiagnostic(code, message, file, span);
}

/** A syntax diagnostic over a known span; the hint comes from the registry. */
export function spanDiagnostic(
  code: keyof typeof langErrors.specs & string,
  message: string,
  file: string,
  span: Span,
): Diagnostic {
  const diagnostic: Diagnostic = {
    code,
    severity: 'error',
    message,
    file,
    line: Math.max(1, span.start.line),
    column: Math.max(1, span.start.column),
    endLine: Math.max(1, span.end.line),
    endColumn: Math.max(1, span.end.column),
  };
  const hint = (langErrors.specs[code] as { hint?: string }).hint;
  if (hint !== undefined) diagnostic.hint = hint;
  return diagnostic;
}
