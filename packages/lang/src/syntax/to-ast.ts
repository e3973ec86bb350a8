import type { CstNode, IToken } from 'chevrotain';
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

// Turns the concrete syntax tree into the AST. Nodes chevrotain marked as recovered (a rule that
// failed and was skipped) are dropped, so the AST holds exactly the assignments that did parse;
// tokens chevrotain inserted during recovery (a missing `]`) carry no position and are ignored for spans.

/** Builds AST nodes from CST nodes, collecting the diagnostics found on the way (escapes, `/` in keys, junk). */
export class AstBuilder {
  constructor(
    private readonly fileName: string,
    private readonly diagnostics: Diagnostic[],
  ) {}

  /** The top-level assignments of a `file` CST node; each `stray` line becomes one diagnostic. */
  file(node: CstNode): Assignment[] {
    const assignments: Assignment[] = [];
    const children = node.children;
    for (const child of (children.assignment as CstNode[] | undefined) ?? []) {
      const assignment = this.assignment(child);
      if (assignment !== undefined) assignments.push(assignment);
    }
    for (const stray of (children.stray as CstNode[] | undefined) ?? []) this.stray(stray);
    return assignments;
  }

  private stray(node: CstNode): void {
    const tokens = allTokens(node).filter(hasPosition);
    if (tokens.length === 0) return;
    const first = tokens[0];
    const last = tokens[tokens.length - 1];
    const shown = first.image.length > 24 ? `${first.image.slice(0, 24)}...` : first.image;
    this.diagnostics.push(
      spanDiagnostic(
        'mtr:syntax:unexpected-token',
        `unexpected \`${shown}\`: a line starts with \`key = value\``,
        this.fileName,
        { start: startOf(first), end: endOf(last) },
      ),
    );
  }

  private assignment(node: CstNode): Assignment | undefined {
    if (node.recoveredNode) return undefined;
    const keyNode = (node.children.keyPath as CstNode[] | undefined)?.[0];
    const valueNode = (node.children.value as CstNode[] | undefined)?.[0];
    if (keyNode === undefined || valueNode === undefined) return undefined;
    const key = this.keyPath(keyNode);
    const value = this.value(valueNode);
    if (key === undefined || value === undefined) return undefined;
    return { kind: 'Assignment', key, value, span: { start: key.span.start, end: value.span.end } };
  }

  private keyPath(node: CstNode): KeyPath | undefined {
    if (node.recoveredNode) return undefined;
    const segments: KeySegment[] = [];
    for (const child of (node.children.keySegment as CstNode[] | undefined) ?? []) {
      const segment = this.keySegment(child);
      if (segment === undefined) return undefined;
      segments.push(segment);
    }
    if (segments.length === 0) return undefined;
    return { segments, span: { start: segments[0].span.start, end: segments[segments.length - 1].span.end } };
  }

  private keySegment(node: CstNode): KeySegment | undefined {
    if (node.recoveredNode) return undefined;
    const head = (node.children.head as IToken[] | undefined)?.[0];
    const tail = (node.children.tail as IToken[] | undefined)?.[0];
    if (!hasPosition(head)) return undefined;
    const headName = this.name(head, false);
    if (tail === undefined) {
      return { name: headName, quoted: isString(head), span: tokenSpan(head) };
    }
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
    if (isString(token)) return this.string(token).value;
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

  private value(node: CstNode): ValueNode | undefined {
    if (node.recoveredNode) return undefined;
    const c = node.children;
    if (c.StringLike !== undefined) return this.token(c.StringLike[0] as IToken, (t) => this.string(t));
    if (c.NumberLiteral !== undefined) {
      return this.token(c.NumberLiteral[0] as IToken, (t) => ({
        kind: 'Number',
        value: Number(t.image),
        raw: t.image,
        span: tokenSpan(t),
      }));
    }
    if (c.True !== undefined) {
      return this.token(c.True[0] as IToken, (t) => ({ kind: 'Boolean', value: true, span: tokenSpan(t) }));
    }
    if (c.False !== undefined) {
      return this.token(c.False[0] as IToken, (t) => ({ kind: 'Boolean', value: false, span: tokenSpan(t) }));
    }
    if (c.Null !== undefined) return this.token(c.Null[0] as IToken, (t) => ({ kind: 'Null', span: tokenSpan(t) }));
    if (c.array !== undefined) return this.array(c.array[0] as CstNode);
    if (c.object !== undefined) return this.object(c.object[0] as CstNode);
    if (c.directive !== undefined) return this.directive(c.directive[0] as CstNode);
    const bareWord = (c.bareWord as IToken[] | undefined)?.[0];
    if (hasPosition(bareWord)) {
      this.diagnostics.push(
        spanDiagnostic(
          'mtr:syntax:unexpected-token',
          `expected a value, found the bare word \`${bareWord.image}\`: write a string in double quotes, "${bareWord.image}"`,
          this.fileName,
          tokenSpan(bareWord),
        ),
      );
    }
    return undefined;
  }

  private token<T extends ValueNode>(token: IToken, build: (token: IToken) => T): T | undefined {
    return hasPosition(token) ? build(token) : undefined;
  }

  private array(node: CstNode): ArrayValue | undefined {
    if (node.recoveredNode) return undefined;
    const span = nodeSpan(node, 'LBracket', 'RBracket');
    if (span === undefined) return undefined;
    const elements: ValueNode[] = [];
    for (const child of (node.children.value as CstNode[] | undefined) ?? []) {
      const element = this.value(child);
      if (element !== undefined) elements.push(element);
    }
    return { kind: 'Array', elements, span };
  }

  private object(node: CstNode): ObjectValue | undefined {
    if (node.recoveredNode) return undefined;
    const span = nodeSpan(node, 'LCurly', 'RCurly');
    if (span === undefined) return undefined;
    const entries: Assignment[] = [];
    for (const child of (node.children.assignment as CstNode[] | undefined) ?? []) {
      const entry = this.assignment(child);
      if (entry !== undefined) entries.push(entry);
    }
    return { kind: 'Object', entries, span };
  }

  private directive(node: CstNode): DirectiveValue | undefined {
    if (node.recoveredNode) return undefined;
    const span = nodeSpan(node, 'DirectiveName', 'RParen');
    const name = (node.children.DirectiveName as IToken[] | undefined)?.[0];
    if (span === undefined || !hasPosition(name)) return undefined;
    const args: StringValue[] = [];
    for (const token of (node.children.args as IToken[] | undefined) ?? []) {
      if (hasPosition(token)) args.push(this.string(token));
    }
    return { kind: 'Directive', name: name.image.slice(1), args, span };
  }

  private string(token: IToken): StringValue {
    const start: Position = startOf(token);
    const decoded = decodeString(token.image, token.tokenType.name === 'UnterminatedString');
    for (const problem of decoded.problems) {
      const at = { offset: start.offset + problem.index, line: start.line, column: start.column + problem.index };
      this.diagnostics.push(
        spanDiagnostic('mtr:syntax:invalid-escape', problem.message, this.fileName, {
          start: at,
          end: { offset: at.offset + problem.length, line: at.line, column: at.column + problem.length },
        }),
      );
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

// Every token under a CST node, in source order.
function allTokens(node: CstNode): IToken[] {
  const tokens: IToken[] = [];
  for (const list of Object.values(node.children)) {
    for (const element of list) {
      if ('children' in element) tokens.push(...allTokens(element));
      else tokens.push(element);
    }
  }
  return tokens.sort((a, b) => a.startOffset - b.startOffset);
}

// From the opening token to the closing one; a closer inserted by recovery ends the span at the last real token.
function nodeSpan(node: CstNode, open: string, close: string): Span | undefined {
  const first = (node.children[open] as IToken[] | undefined)?.[0];
  const last = (node.children[close] as IToken[] | undefined)?.[0];
  if (hasPosition(first) && hasPosition(last)) return { start: startOf(first), end: endOf(last) };
  const tokens = allTokens(node).filter(hasPosition);
  if (tokens.length === 0) return undefined;
  return { start: startOf(tokens[0]), end: endOf(tokens[tokens.length - 1]) };
}
