import type { IToken } from 'chevrotain';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import type {
  ArrayValue,
  Assignment,
  DirectiveValue,
  KeyPath,
  KeySegment,
  ObjectValue,
  Position,
  Span,
  StringValue,
  ValueNode,
} from './ast.js';
import { endOf, hasPosition, spanDiagnostic, startOf } from './positions.js';
import { decodeString } from './strings.js';

// Builds AST nodes from the tokens the parser's actions hand over. The parser drops what its error recovery
// gave up on (a rule it re-synced out of), so the AST holds exactly the assignments that did parse; tokens
// chevrotain inserted during recovery (a missing `]`) carry no position and are ignored for spans.

/**
 * Builds AST nodes for the parser and collects the diagnostics found on the way (escapes, `/` in keys, bare
 * words, junk lines). Diagnostics of assignments and of junk lines are kept apart, as they are reported in
 * that order; a rule the parser re-synced out of takes its diagnostics back with {@link truncate}.
 */
export class AstBuilder {
  private fileName = '';
  /** Diagnostics of assignments, in source order. */
  diagnostics: Diagnostic[] = [];
  /** One diagnostic per junk top-level line. */
  strayDiagnostics: Diagnostic[] = [];

  /** Starts a new file. */
  reset(fileName: string): void {
    this.fileName = fileName;
    this.diagnostics = [];
    this.strayDiagnostics = [];
  }

  /** How many assignment diagnostics there are, to {@link truncate} back to. */
  mark(): number {
    return this.diagnostics.length;
  }

  /** Drops the assignment diagnostics found since `mark`. */
  truncate(mark: number): void {
    this.diagnostics.length = mark;
  }

  /** A junk top-level line, from its first to its last positioned token. */
  stray(first: IToken, last: IToken): void {
    if (!hasPosition(first)) return;
    const shown = first.image.length > 24 ? `${first.image.slice(0, 24)}...` : first.image;
    this.strayDiagnostics.push(
      spanDiagnostic(
        'mtr:syntax:unexpected-token',
        `unexpected \`${shown}\`: a line starts with \`key = value\``,
        this.fileName,
        { start: startOf(first), end: endOf(hasPosition(last) ? last : first) },
      ),
    );
  }

  /** `key = value`, when both parts were built. */
  assignment(key: KeyPath | undefined, value: ValueNode | undefined): Assignment | undefined {
    if (key === undefined || value === undefined) return undefined;
    return { kind: 'Assignment', key, value, span: { start: key.span.start, end: value.span.end } };
  }

  /** A dotted key from its segments. */
  keyPath(segments: KeySegment[]): KeyPath | undefined {
    if (segments.length === 0) return undefined;
    return { segments, span: { start: segments[0].span.start, end: segments[segments.length - 1].span.end } };
  }

  /** `head` or `head:tail`; `tail` is undefined when there is no `:`. */
  keySegment(head: IToken, tail: IToken | undefined): KeySegment | undefined {
    if (!hasPosition(head)) return undefined;
    const headName = this.name(head, false);
    if (tail === undefined) return { name: headName, quoted: isString(head), span: tokenSpan(head) };
    if (!hasPosition(tail)) return undefined;
    return {
      name: this.name(tail, true),
      qualifier: headName,
      quoted: isString(tail),
      span: { start: startOf(head), end: endOf(tail) },
    };
  }

  // A segment name: a quoted string's value, or the identifier, which may hold `/` only after `:`.
  private name(token: IToken, afterColon: boolean): string {
    if (isString(token)) return this.decode(token).value;
    if (!afterColon && token.image.includes('/')) {
      this.diagnostics.push(
        spanDiagnostic(
          'mtr:syntax:invalid-key',
          `\`${token.image}\` is not a key segment: \`/\` may appear only in the name of a \`kind:name\` segment`,
          this.fileName,
          tokenSpan(token),
        ),
      );
    }
    return token.image;
  }

  /** A string value. */
  string(token: IToken): StringValue | undefined {
    return hasPosition(token) ? this.decode(token) : undefined;
  }

  /** A number value. */
  number(token: IToken): ValueNode | undefined {
    if (!hasPosition(token)) return undefined;
    return { kind: 'Number', value: Number(token.image), raw: token.image, span: tokenSpan(token) };
  }

  /** `true` or `false`. */
  boolean(token: IToken, value: boolean): ValueNode | undefined {
    return hasPosition(token) ? { kind: 'Boolean', value, span: tokenSpan(token) } : undefined;
  }

  /** `null`. */
  null(token: IToken): ValueNode | undefined {
    return hasPosition(token) ? { kind: 'Null', span: tokenSpan(token) } : undefined;
  }

  /** A bare word where a value belongs: reported, and no value (see {@link bareWordMessage}). */
  bareWord(token: IToken): undefined {
    if (!hasPosition(token)) return undefined;
    this.diagnostics.push(
      spanDiagnostic('mtr:syntax:unexpected-token', bareWordMessage(token.image), this.fileName, tokenSpan(token)),
    );
    return undefined;
  }

  /** `[ ... ]`; `last` is the last positioned token inside, for when recovery inserted the `]`. */
  array(open: IToken, close: IToken, last: IToken, elements: ValueNode[]): ArrayValue | undefined {
    const span = nodeSpan(open, close, last);
    return span === undefined ? undefined : { kind: 'Array', elements, span };
  }

  /** `{ ... }`; `last` as for {@link array}. */
  object(
    open: IToken,
    close: IToken,
    last: IToken,
    entries: Assignment[],
    unparsed: KeyPath[],
  ): ObjectValue | undefined {
    const span = nodeSpan(open, close, last);
    if (span === undefined) return undefined;
    return unparsed.length > 0 ? { kind: 'Object', entries, unparsed, span } : { kind: 'Object', entries, span };
  }

  /** `@name(...)`; `last` as for {@link array}. */
  directive(name: IToken, close: IToken, last: IToken, argTokens: IToken[]): DirectiveValue | undefined {
    const span = nodeSpan(name, close, last);
    if (span === undefined || !hasPosition(name)) return undefined;
    const args: StringValue[] = [];
    for (const token of argTokens) if (hasPosition(token)) args.push(this.decode(token));
    return { kind: 'Directive', name: name.image.slice(1), args, span };
  }

  private decode(token: IToken): StringValue {
    const decoded = decodeString(token.image, token.tokenType.name === 'UnterminatedString');
    if (decoded.problems.length > 0) {
      const start: Position = startOf(token);
      for (const problem of decoded.problems) {
        const at = { offset: start.offset + problem.index, line: start.line, column: start.column + problem.index };
        this.diagnostics.push(
          spanDiagnostic('mtr:syntax:invalid-escape', problem.message, this.fileName, {
            start: at,
            end: { offset: at.offset + problem.length, line: at.line, column: at.column + problem.length },
          }),
        );
      }
    }
    return { kind: 'String', value: decoded.value, raw: token.image, span: tokenSpan(token) };
  }
}

function isString(token: IToken): boolean {
  const name = token.tokenType.name;
  return name === 'StringLiteral' || name === 'UnterminatedString';
}

function tokenSpan(token: IToken): Span {
  return { start: startOf(token), end: endOf(token) };
}

// From the opening token to the closing one; a closer inserted by recovery ends the span at the last real token.
function nodeSpan(open: IToken, close: IToken, last: IToken): Span | undefined {
  if (hasPosition(open) && hasPosition(close)) return { start: startOf(open), end: endOf(close) };
  if (!hasPosition(open)) return undefined;
  return { start: startOf(open), end: endOf(hasPosition(last) ? last : open) };
}

/**
 * The message for a bare word where a value belongs. A yes-or-no word (`yes`, `off`, `True`) is most often a
 * boolean: the message names `true`/`false` first, so that quoting it (which the shape check then refuses on
 * a boolean property) is not the only way out it offers.
 */
export function bareWordMessage(word: string): string {
  const flag = yesOrNo(word);
  if (flag !== undefined)
    return `expected a value, found the bare word \`${word}\`: a yes-or-no property takes ${flag} (without quotes); text is a string in double quotes, "${word}"`;
  return `expected a value, found the bare word \`${word}\`: write a string in double quotes, "${word}"`;
}

const YES = new Set(['yes', 'y', 'on', 'true', 'enabled']);
const NO = new Set(['no', 'n', 'off', 'false', 'disabled']);

/** `true` or `false` for a word that reads as one (`yes`, `Off`, `TRUE`), else undefined. */
export function yesOrNo(word: string): 'true' | 'false' | undefined {
  const lower = word.toLowerCase();
  return YES.has(lower) ? 'true' : NO.has(lower) ? 'false' : undefined;
}
