import { createTokenInstance, type IToken } from 'chevrotain';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import type { Assignment, Comment, FileNode, KeyPath } from './ast.js';
import { lexMtr } from './lexer.js';
import { MAX_PARSER_ERRORS, messageContext, TooManyErrors } from './messages.js';
import { parser } from './parser.js';
import { endOf, endOfText, spanDiagnostic, startOf, syntaxDiagnostic } from './positions.js';
import { Null } from './tokens.js';

/** How deep arrays and objects may nest; deeper input is refused rather than risking the stack. */
export const MAX_NESTING = 64;

/** What {@link parseMtr} returns: the AST (what could be parsed) and every syntax diagnostic. */
export interface ParseResult {
  ast: FileNode;
  diagnostics: Diagnostic[];
}

/**
 * Parses one `.mtr` file. Never throws: lexer and parser errors become diagnostics (all of them, in
 * one pass), and the AST keeps every assignment that parsed.
 */
export function parseMtr(text: string, file: string): ParseResult {
  const diagnostics: Diagnostic[] = [];
  const eof = endOfText(text);
  const lexed = lexMtr(text);

  for (const error of lexed.errors) {
    const line = error.line ?? 1;
    const column = error.column ?? 1;
    diagnostics.push(
      spanDiagnostic('mtr:syntax:unexpected-character', error.message, file, {
        start: { offset: error.offset, line, column },
        end: { offset: error.offset + error.length, line, column: column + Math.max(1, error.length) },
      }),
    );
  }

  const tokens = limitNesting(lexed.tokens, file, diagnostics, eof);
  for (const token of tokens) {
    if (token.tokenType.name === 'UnterminatedString') {
      diagnostics.push(
        spanDiagnostic(
          'mtr:syntax:unterminated-string',
          'unterminated string: the closing `"` is missing before the end of the line',
          file,
          { start: startOf(token), end: endOf(token) },
        ),
      );
    }
  }

  const comments: Comment[] = (lexed.groups.comments ?? []).map((token: IToken) => ({
    text: token.image.slice(2),
    span: { start: startOf(token), end: endOf(token) },
  }));

  let assignments: Assignment[] = [];
  let unparsed: KeyPath[] = [];
  let stopped: Diagnostic | undefined;
  // A copy: chevrotain (13 and later) pads the array it parses with end-of-file sentinels while it parses, and the
  // message provider looks keys up in these tokens by offset while the parse runs.
  messageContext.tokens = tokens.slice();
  messageContext.count = 0;
  parser.start(file, tokens);
  try {
    parser.file();
  } catch (error) {
    if (!(error instanceof TooManyErrors)) throw error;
    stopped = syntaxDiagnostic(
      'mtr:syntax:unexpected-token',
      `more than ${MAX_PARSER_ERRORS} syntax errors; stopped here`,
      file,
      { token: error.token },
      eof,
    );
  } finally {
    messageContext.tokens = [];
  }
  for (const error of parser.errors) {
    const previous = (error as { previousToken?: IToken }).previousToken;
    diagnostics.push(
      syntaxDiagnostic('mtr:syntax:unexpected-token', error.message, file, { token: error.token, previous }, eof),
    );
  }
  if (stopped === undefined) {
    // A top-level assignment that recovery re-synced out of, up at the file, did not parse.
    if (parser.pending >= 0) parser.ast.truncate(parser.pending);
    const pendingKey = parser.pendingKeyPath();
    if (pendingKey !== undefined) parser.unparsed.push(pendingKey);
    assignments = parser.assignments;
    unparsed = parser.unparsed;
    for (const d of parser.ast.diagnostics) diagnostics.push(d);
    for (const d of parser.ast.strayDiagnostics) diagnostics.push(d);
  }
  parser.start('', []);

  return {
    ast: {
      kind: 'File',
      file,
      assignments,
      ...(unparsed.length > 0 ? { unparsed } : {}),
      comments,
      span: { start: { offset: 0, line: 1, column: 1 }, end: eof },
    },
    diagnostics: stopped === undefined ? sortAndDedupe(diagnostics) : [...sortAndDedupe(diagnostics), stopped],
  };
}

// Replaces every array or object nested deeper than MAX_NESTING by one `null` token (with a
// diagnostic), so the recursive-descent parser never goes deeper than that.
function limitNesting(
  tokens: IToken[],
  file: string,
  diagnostics: Diagnostic[],
  eof: ReturnType<typeof endOfText>,
): IToken[] {
  let depth = 0;
  let out: IToken[] | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const name = tokens[i].tokenType.name;
    if (name === 'LBracket' || name === 'LCurly') {
      if (depth === MAX_NESTING) {
        out ??= tokens.slice(0, i);
        const opener = tokens[i];
        let inner = 0;
        let j = i;
        for (; j < tokens.length; j++) {
          const n = tokens[j].tokenType.name;
          if (n === 'LBracket' || n === 'LCurly') inner++;
          else if ((n === 'RBracket' || n === 'RCurly') && --inner === 0) break;
        }
        const last = tokens[Math.min(j, tokens.length - 1)];
        diagnostics.push(
          syntaxDiagnostic(
            'mtr:syntax:too-deep',
            `arrays and objects nest deeper than ${MAX_NESTING} levels`,
            file,
            { token: opener },
            eof,
          ),
        );
        out.push(
          createTokenInstance(
            Null,
            'null',
            opener.startOffset,
            last.endOffset ?? opener.startOffset,
            opener.startLine ?? 1,
            last.endLine ?? 1,
            opener.startColumn ?? 1,
            last.endColumn ?? 1,
          ),
        );
        i = j;
        continue;
      }
      depth++;
    } else if ((name === 'RBracket' || name === 'RCurly') && depth > 0) {
      depth--;
    }
    out?.push(tokens[i]);
  }
  return out ?? tokens;
}

// Sorted by position; at most one diagnostic per position, and one unexpected-token per line:
// after the first, the rest of a broken line is mostly the parser's recovery talking.
function sortAndDedupe(diagnostics: Diagnostic[]): Diagnostic[] {
  const positions = new Set<string>();
  const lines = new Set<number>();
  const kept: Diagnostic[] = [];
  for (const d of diagnostics.sort((a, b) => a.line - b.line || a.column - b.column)) {
    const at = `${d.line}:${d.column}`;
    if (positions.has(at)) continue;
    if (d.code === 'mtr:syntax:unexpected-token') {
      if (lines.has(d.line)) continue;
      lines.add(d.line);
    }
    positions.add(at);
    kept.push(d);
  }
  return kept;
}
