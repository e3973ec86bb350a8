/** A point in a source file; `line` and `column` are 1-based, `offset` 0-based (UTF-16 units). */
export interface Position {
  offset: number;
  line: number;
  column: number;
}

/** A range of source text; `end` is exclusive. */
export interface Span {
  start: Position;
  end: Position;
}

/** One segment of a dotted key: `parameters`, `"x-request-id"`, or `query:current` (qualifier `query`, name `current`). */
export interface KeySegment {
  /** The name; for `request:address/city` it is `address/city`. Quoted segments hold the unescaped string. */
  name: string;
  /** The `kind` of a `kind:name` segment (`query`, `request`, `path`), absent otherwise. */
  qualifier?: string;
  /** True when the segment was written as a quoted string. */
  quoted: boolean;
  span: Span;
}

/** A dotted key path such as `inputs.functions.binding`. */
export interface KeyPath {
  segments: KeySegment[];
  span: Span;
}

/** `key = value`, at the top level of a file or inside an object. */
export interface Assignment {
  kind: 'Assignment';
  key: KeyPath;
  value: ValueNode;
  span: Span;
}

/** A double-quoted string; `value` has escapes resolved. */
export interface StringValue {
  kind: 'String';
  value: string;
  raw: string;
  span: Span;
}

/** A number literal. */
export interface NumberValue {
  kind: 'Number';
  value: number;
  raw: string;
  span: Span;
}

/** `true` or `false`. */
export interface BooleanValue {
  kind: 'Boolean';
  value: boolean;
  span: Span;
}

/** `null`. */
export interface NullValue {
  kind: 'Null';
  span: Span;
}

/** `[ a, b ]`. */
export interface ArrayValue {
  kind: 'Array';
  elements: ValueNode[];
  span: Span;
}

/** `{ k = v  k2 = v2 }`; keys may be dotted paths too. */
export interface ObjectValue {
  kind: 'Object';
  entries: Assignment[];
  /** The keys of entries whose value did not parse (only when there are some), so no check calls them missing. */
  unparsed?: KeyPath[];
  span: Span;
}

/** `@ref("name")` or `@json("file.json")`: a directive with string arguments. */
export interface DirectiveValue {
  kind: 'Directive';
  /** The directive's name without `@` (`ref`, `json`). */
  name: string;
  args: StringValue[];
  span: Span;
}

/** Any value. */
export type ValueNode =
  | StringValue
  | NumberValue
  | BooleanValue
  | NullValue
  | ArrayValue
  | ObjectValue
  | DirectiveValue;

/** A `// comment`, kept so that `mt fmt` can write it back. */
export interface Comment {
  /** The text after `//`, as written. */
  text: string;
  span: Span;
}

/** A whole `.mtr` file. After recovery from syntax errors it holds what could be parsed. */
export interface FileNode {
  kind: 'File';
  file: string;
  assignments: Assignment[];
  /** The keys of top-level assignments whose value did not parse (only when there are some). */
  unparsed?: KeyPath[];
  comments: Comment[];
  span: Span;
}
