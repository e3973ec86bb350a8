import type { Diagnostic } from '../diagnostics/diagnostic.js';
import type { Assignment, Comment, KeyPath, ValueNode } from '../syntax/ast.js';
import { parseMtr } from '../syntax/parse.js';
import { encodeString } from '../syntax/strings.js';

/** What {@link formatMtr} returns: the canonical text, or the original text and the syntax errors that stopped it. */
export interface FormatResult {
  text: string;
  diagnostics: Diagnostic[];
}

/** Lines longer than this are broken: objects and arrays that would pass it go multi-line. */
export const FORMAT_WIDTH = 100;
const INDENT = '  ';
const BARE_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/**
 * Formats `.mtr` text canonically (one assignment per line, two-space indent, comments kept);
 * a file with syntax errors is returned unchanged with its diagnostics.
 */
export function formatMtr(text: string, file = 'input.mtr'): FormatResult {
  const { ast, diagnostics } = parseMtr(text, file);
  if (diagnostics.some((d) => d.severity === 'error')) return { text, diagnostics };
  const printer = new Printer(text, ast.comments);
  printer.file(ast.assignments);
  return { text: printer.result(), diagnostics };
}

// Layout rules: an object stays on one line when it was written on one line, fits, and holds no
// comment (the author's line break is kept, as prettier does for objects); an array goes one element
// per line when it holds an object, a comment, or does not fit. Comments are emitted before the next
// item that starts after them: own-line comments on their own line at that item's indent, trailing
// comments at the end of the line that was last written. One blank line is kept where the source had any.
class Printer {
  private readonly lines: string[] = [];
  private readonly ownLine: boolean[];
  private next = 0;
  private lastSourceLine = 0;
  private atContainerStart = true;

  constructor(
    source: string,
    private readonly comments: Comment[],
  ) {
    this.ownLine = comments.map((c) => isOwnLine(source, c.span.start.offset));
  }

  file(assignments: Assignment[]): void {
    for (const assignment of assignments) this.assignment(assignment, '');
    this.flushComments(Number.POSITIVE_INFINITY, '');
  }

  result(): string {
    return this.lines.length === 0 ? '' : `${this.lines.join('\n')}\n`;
  }

  private assignment(a: Assignment, indent: string): void {
    this.startItem(a.span.start.offset, a.span.start.line, indent);
    const head = `${indent}${keyText(a.key)} = `;
    this.value(a.value, head, indent, '');
    this.lastSourceLine = a.span.end.line;
  }

  // Writes `value` starting on a new line that begins with `head`; `tail` (a comma) ends its last line.
  private value(value: ValueNode, head: string, indent: string, tail: string): void {
    const inline = this.inline(value);
    if (inline !== undefined && head.length + inline.length + tail.length <= FORMAT_WIDTH) {
      this.lines.push(head + inline + tail);
      return;
    }
    if (value.kind === 'Array' && value.elements.length > 0) {
      this.lines.push(`${head}[`);
      this.atContainerStart = true;
      const inner = indent + INDENT;
      value.elements.forEach((element, i) => {
        this.startItem(element.span.start.offset, element.span.start.line, inner);
        this.value(element, inner, inner, i < value.elements.length - 1 ? ',' : '');
        this.lastSourceLine = element.span.end.line;
      });
      this.closeContainer(value.span.end.offset - 1, inner);
      this.lines.push(`${indent}]${tail}`);
    } else if (value.kind === 'Object' && value.entries.length > 0) {
      this.lines.push(`${head}{`);
      this.atContainerStart = true;
      const inner = indent + INDENT;
      for (const entry of value.entries) this.assignment(entry, inner);
      this.closeContainer(value.span.end.offset - 1, inner);
      this.lines.push(`${indent}}${tail}`);
    } else if (value.kind === 'Array' || value.kind === 'Object') {
      // Empty, but holding comments: keep them inside.
      this.lines.push(`${head}${value.kind === 'Array' ? '[' : '{'}`);
      this.atContainerStart = true;
      this.closeContainer(value.span.end.offset - 1, indent + INDENT);
      this.lines.push(`${indent}${value.kind === 'Array' ? ']' : '}'}${tail}`);
    } else {
      this.lines.push(head + scalarText(value) + tail);
    }
  }

  // The one-line form of a value, or undefined when it must take several lines.
  private inline(value: ValueNode): string | undefined {
    switch (value.kind) {
      case 'Array': {
        if (this.hasCommentInside(value.span.start.offset, value.span.end.offset)) return undefined;
        const parts: string[] = [];
        for (const element of value.elements) {
          if (element.kind === 'Object') return undefined;
          const part = this.inline(element);
          if (part === undefined) return undefined;
          parts.push(part);
        }
        return `[${parts.join(', ')}]`;
      }
      case 'Object': {
        if (value.entries.length === 0) {
          return this.hasCommentInside(value.span.start.offset, value.span.end.offset) ? undefined : '{}';
        }
        if (value.span.start.line !== value.span.end.line) return undefined;
        if (this.hasCommentInside(value.span.start.offset, value.span.end.offset)) return undefined;
        const parts: string[] = [];
        for (const entry of value.entries) {
          const part = this.inline(entry.value);
          if (part === undefined) return undefined;
          parts.push(`${keyText(entry.key)} = ${part}`);
        }
        return `{ ${parts.join(' ')} }`;
      }
      default:
        return scalarText(value);
    }
  }

  // Before an item that starts a line: the comments before it, and a blank line if the source had one.
  private startItem(offset: number, line: number, indent: string): void {
    this.flushComments(offset, indent);
    this.blankLineBefore(line);
    this.atContainerStart = false;
  }

  private closeContainer(closeOffset: number, indent: string): void {
    this.flushComments(closeOffset, indent);
    this.atContainerStart = false;
  }

  private flushComments(before: number, indent: string): void {
    while (this.next < this.comments.length && this.comments[this.next].span.start.offset < before) {
      const index = this.next++;
      const comment = this.comments[index];
      const text = `//${comment.text.trimEnd()}`;
      if (this.ownLine[index] || this.lines.length === 0) {
        this.blankLineBefore(comment.span.start.line);
        this.lines.push(indent + text);
        this.atContainerStart = false;
      } else {
        this.lines[this.lines.length - 1] += ` ${text}`;
      }
      this.lastSourceLine = comment.span.start.line;
    }
  }

  private blankLineBefore(line: number): void {
    if (!this.atContainerStart && this.lines.length > 0 && line - this.lastSourceLine >= 2) this.lines.push('');
  }

  private hasCommentInside(start: number, end: number): boolean {
    // Comments are sorted by offset: find the first at or after `start`.
    let lo = 0;
    let hi = this.comments.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.comments[mid].span.start.offset < start) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.comments.length && this.comments[lo].span.start.offset < end;
  }
}

function scalarText(value: ValueNode): string {
  switch (value.kind) {
    case 'String':
      return encodeString(value.value);
    case 'Number':
      return value.raw;
    case 'Boolean':
      return value.value ? 'true' : 'false';
    case 'Null':
      return 'null';
    case 'Directive':
      return `@${value.name}(${value.args.map((a) => encodeString(a.value)).join(', ')})`;
    default:
      return '';
  }
}

/** A key path as canonical text: bare segments stay bare, quoted ones are re-escaped. */
export function keyText(key: KeyPath): string {
  return key.segments
    .map((s) => {
      const name = s.quoted ? encodeString(s.name) : s.name;
      if (s.qualifier === undefined) return name;
      return `${BARE_NAME.test(s.qualifier) ? s.qualifier : encodeString(s.qualifier)}:${name}`;
    })
    .join('.');
}

// True when only whitespace (or a byte-order mark) precedes the comment on its line.
function isOwnLine(source: string, offset: number): boolean {
  for (let i = offset - 1; i >= 0; i--) {
    const c = source.charCodeAt(i);
    if (c === 10 || c === 13) return true;
    if (c !== 32 && c !== 9 && c !== 0xfeff && c !== 11 && c !== 12) return false;
  }
  return true;
}
