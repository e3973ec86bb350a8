import type { IToken } from 'chevrotain';
import { CONVERSATION_SHAPE, KIND_SHAPES, MCP_CONNECTOR_SHAPE } from '../config/kind-shapes.js';
import { classifyPath } from '../config/repo-layout.js';
import type { Property, RefKind, Shape } from '../config/shape.js';
import { lexMtr } from '../syntax/lexer.js';

/** A step into a value: a property name, or an array element (any index: all elements share one shape). */
export type ShapeStep = string | number;

/** A word of the text: its text (a string's without the quotes) and its 0-based UTF-16 offsets, end exclusive. */
export interface Word {
  text: string;
  start: number;
  end: number;
}

/**
 * What is at a place of a `.mtr` file, for an editor:
 * - `key`: a property name goes here (or is there: `word`); `path` leads to the object that holds it,
 *   `present` are the names that object has already;
 * - `ref`: inside `@ref(...)` of the property at `path`; `word` is the string written so far, if any;
 * - `value`: where the value at `path` starts (after `=`, or in an array), nothing of it written yet;
 * - `other`: anywhere else (inside a value, a comment).
 */
export type EditorContext =
  | { at: 'key'; path: ShapeStep[]; present: string[]; word?: Word }
  | { at: 'ref'; path: ShapeStep[]; word?: Word }
  | { at: 'value'; path: ShapeStep[] }
  | { at: 'other' };

interface Frame {
  type: 'object' | 'array';
  path: ShapeStep[];
  /** In an object: reading a key, its value, or the arguments of a directive. In an array: value or directive. */
  mode: 'key' | 'value' | 'directive';
  /** The segments of the key being read (and, while its value is read, of that value's key). */
  keyParts: string[];
  keys: Set<string>;
  directive?: string;
}

const WORD_TOKENS = new Set(['Identifier', 'StringLiteral', 'UnterminatedString', 'True', 'False', 'Null']);
const SCALAR_TOKENS = new Set([...WORD_TOKENS, 'NumberLiteral']);

function wordText(token: IToken): string {
  const image = token.image;
  if (!image.startsWith('"')) return image;
  return image.endsWith('"') && image.length > 1 ? image.slice(1, -1) : image.slice(1);
}

/** Reads `.mtr` tokens the way the grammar nests them, tolerating any error, to know where a place is. */
class Scanner {
  readonly stack: Frame[] = [{ type: 'object', path: [], mode: 'key', keyParts: [], keys: new Set() }];

  get top(): Frame {
    return this.stack[this.stack.length - 1];
  }

  private valueDone(frame: Frame): void {
    if (frame.type === 'object') {
      frame.mode = 'key';
      frame.keyParts = [];
    } else frame.mode = 'value';
  }

  /** Where a value that starts now belongs. */
  valuePath(): ShapeStep[] {
    const top = this.top;
    return top.type === 'object' ? [...top.path, ...top.keyParts] : [...top.path, 0];
  }

  step(token: IToken): void {
    const top = this.top;
    const type = token.tokenType.name;
    switch (type) {
      case 'LCurly':
      case 'LBracket':
        this.stack.push({
          type: type === 'LCurly' ? 'object' : 'array',
          path: top.type === 'object' && top.mode === 'key' ? top.path : this.valuePath(),
          mode: type === 'LCurly' ? 'key' : 'value',
          keyParts: [],
          keys: new Set(),
        });
        return;
      case 'RCurly':
      case 'RBracket':
        if (this.stack.length > 1) this.stack.pop();
        this.valueDone(this.top);
        return;
      case 'Equals':
        if (top.type === 'object' && top.mode === 'key') {
          if (top.keyParts.length > 0) top.keys.add(top.keyParts[0]);
          top.mode = 'value';
        }
        return;
      case 'DirectiveName':
        top.mode = 'directive';
        top.directive = token.image.slice(1);
        return;
      case 'RParen':
        if (top.mode === 'directive') this.valueDone(top);
        return;
      default:
        if (!SCALAR_TOKENS.has(type) || top.mode === 'directive') return;
        if (top.type === 'object' && top.mode === 'key') top.keyParts.push(wordText(token));
        else if (top.type === 'object') this.valueDone(top);
    }
  }
}

/**
 * What is at `offset` (0-based, UTF-16 units, as LSP positions and chevrotain count) of `.mtr` `text`. Works on
 * text with syntax errors too: it follows the brackets the lexer finds.
 */
export function editorContext(text: string, offset: number): EditorContext {
  const lexed = lexMtr(text);
  for (const comment of lexed.groups.comments ?? []) {
    if (comment.startOffset < offset && offset <= comment.startOffset + comment.image.length) return { at: 'other' };
  }
  const tokens = lexed.tokens;
  const scanner = new Scanner();
  let i = 0;
  let word: IToken | undefined;
  for (; i < tokens.length; i++) {
    const token = tokens[i];
    if (token.startOffset >= offset) break;
    if (token.startOffset + token.image.length >= offset && WORD_TOKENS.has(token.tokenType.name)) {
      word = token;
      break;
    }
    scanner.step(token);
  }
  const top = scanner.top;
  const at = word
    ? { text: wordText(word), start: word.startOffset + (word.image.startsWith('"') ? 1 : 0) }
    : undefined;
  const theWord = at && word ? { ...at, end: at.start + at.text.length } : undefined;

  if (top.mode === 'directive') {
    if (top.directive !== 'ref') return { at: 'other' };
    const previous = tokens[i - 1]?.tokenType.name;
    if (theWord && word?.tokenType.name !== 'Identifier')
      return { at: 'ref', path: scanner.valuePath(), word: theWord };
    if (!theWord && previous === 'LParen') return { at: 'ref', path: scanner.valuePath() };
    return { at: 'other' };
  }
  if (!word && top.mode === 'value') return { at: 'value', path: scanner.valuePath() };
  if (top.type !== 'object' || top.mode !== 'key') return { at: 'other' };

  // The object's other keys, also those after the place: read on until the object closes (the word is skipped,
  // it is the one being written).
  const path = [...top.path, ...top.keyParts];
  const depth = scanner.stack.length;
  const frame = top;
  if (word) i++;
  for (; i < tokens.length && scanner.stack.length >= depth && scanner.stack[depth - 1] === frame; i++) {
    scanner.step(tokens[i]);
  }
  const present = path.length === frame.path.length ? [...frame.keys] : [];
  return theWord ? { at: 'key', path, present, word: theWord } : { at: 'key', path, present };
}

/** The shape of a `.mtr` file from its path relative to the config repo root, or undefined outside resource folders. */
export function fileShape(path: string): Shape | undefined {
  const place = classifyPath(path);
  if (!place) return undefined;
  // The same choice as the compiler's (compile-repo.ts).
  return place.mcp ? MCP_CONNECTOR_SHAPE : place.conversation ? CONVERSATION_SHAPE : KIND_SHAPES[place.kind];
}

/** The shape found by following `path` from `shape`, with the property that holds it (when the last step is a name). */
export function shapeAt(shape: Shape, path: readonly ShapeStep[]): { shape: Shape; property?: Property } | undefined {
  let current: Shape = shape;
  let property: Property | undefined;
  for (const step of path) {
    property = undefined;
    if (current.type === 'object' && typeof step === 'string') {
      property = Object.hasOwn(current.properties, step) ? current.properties[step] : undefined;
      if (!property) return undefined;
      current = property.shape;
    } else if (current.type === 'array' && typeof step === 'number') current = current.items;
    else if (current.type === 'map' && typeof step === 'string') current = current.values;
    else return undefined;
  }
  return { shape: current, property };
}

/** The kind a `@ref` at `path` of a file of `shape` must name, or undefined where no reference is expected. */
export function refKindAt(shape: Shape, path: readonly ShapeStep[]): RefKind | undefined {
  const found = shapeAt(shape, path);
  return found?.shape.type === 'ref' ? found.shape.kind : undefined;
}

/** A short description of what a value of `shape` is, for editors. */
export function describeShape(shape: Shape): string {
  switch (shape.type) {
    case 'string':
      return shape.values ? `one of ${shape.values.map((v) => JSON.stringify(v)).join(', ')}` : 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'true or false';
    case 'ref':
      return `@ref("<${shape.kind}>")`;
    case 'object':
      return `{ ${Object.keys(shape.properties).join(' ')} }`;
    case 'map':
      return '{ name = value ... }';
    case 'array':
      return `[ ${describeShape(shape.items)}, ... ]`;
    case 'json':
      return 'any value (or @json("file.json"))';
    case 'schema':
      return 'a JSON Schema (or @json("file.json"))';
  }
}

/** The Markdown an editor shows for property `name`: required or not, its value, what it is for. */
export function describeProperty(name: string, property: Property): string {
  const head = `**${name}** (${property.required ? 'required' : 'optional'}): ${describeShape(property.shape)}`;
  return property.doc ? `${head}\n\n${property.doc}` : head;
}
