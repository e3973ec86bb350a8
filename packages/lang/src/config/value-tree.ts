import type { Assignment, DirectiveValue, FileNode, KeyPath, Span, ValueNode } from '../syntax/ast.js';
import type { Json } from './resources.js';
import { FILE_START, type Reporter } from './report.js';

/** A `@ref("name")` kept as a typed value, with the position of the directive. */
export class RefValue {
  constructor(
    readonly name: string,
    readonly span: Span,
  ) {}
}

/** A value of the plain tree a file builds: JSON plus references. */
export type TreeValue = null | boolean | number | string | RefValue | TreeValue[] | TreeObject;

/** An object of the tree; built without a prototype so any key is safe. */
export type TreeObject = { [key: string]: TreeValue };

/** Where the values and keys of a tree were written, by path (see {@link pathKey}). */
export interface TreePositions {
  /** Span of the value at a path. */
  values: Map<string, Span>;
  /** Span of the key that set the value at a path. */
  keys: Map<string, Span>;
  /** The raw text of string values, for positions inside them. */
  raws: Map<string, string>;
}

/** The plain value tree of one file; the positions of its values are worked out when a check first asks. */
export interface ValueTree {
  file: string;
  root: TreeObject;
  /** Paths whose value was refused (a conflict, a bad directive), so later checks do not report them again. */
  failed: Set<string>;
  /** Where every value and key was written; computed on first use, as most files never need a position. */
  readonly positions: TreePositions;
}

/** Loads the JSON file an `@json` names; reports its own diagnostics and returns undefined on failure. */
export type JsonLoader = (path: string, from: string, span: Span) => Json | undefined;

/** A path into a tree: object keys and array indexes. */
type Path = (string | number)[];

/** The key of a path in the position maps. */
export function pathKey(path: readonly (string | number)[]): string {
  return path.join('\u0000');
}

/** True for a tree object (not an array, a reference or a scalar). */
export function isTreeObject(value: TreeValue | undefined): value is TreeObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof RefValue);
}

/** The span of the value at `path`, or of its nearest written ancestor (values from `@json` files). */
export function spanOf(tree: ValueTree, path: readonly (string | number)[]): Span {
  const { values } = tree.positions;
  for (let n = path.length; n >= 0; n--) {
    const span = values.get(pathKey(path.slice(0, n)));
    if (span) return span;
  }
  return FILE_START;
}

/** The span of the key that set `path`, falling back to the value's span. */
export function keySpanOf(tree: ValueTree, path: readonly (string | number)[]): Span {
  return tree.positions.keys.get(pathKey(path)) ?? spanOf(tree, path);
}

/** The raw text (quotes and escapes as written) of the string value at `path`, if it was written in the file. */
export function rawOf(tree: ValueTree, path: readonly (string | number)[]): string | undefined {
  return tree.positions.raws.get(pathKey(path));
}

/** Shows a path as it is written: `parameters.query[2].name`. */
export function displayPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? part : `.${part}`;
  }
  return out || '(file)';
}

// Tree objects inherit from an empty object that has no prototype itself: like `Object.create(null)`, no key
// such as `constructor` or `__proto__` means anything special, but V8 keeps such objects in its fast mode
// (`Object.create(null)` objects are hash tables, which made building trees markedly slower).
const EmptyObject = function EmptyObject() {} as unknown as new () => TreeObject;
EmptyObject.prototype = Object.create(null);

/** A new, empty tree object. */
export function newObject(): TreeObject {
  return new EmptyObject();
}

function fromJson(value: Json): TreeValue {
  if (Array.isArray(value)) return value.map(fromJson);
  if (typeof value === 'object' && value !== null) {
    const out = newObject();
    for (const [k, v] of Object.entries(value)) out[k] = fromJson(v);
    return out;
  }
  return value;
}

function describe(value: TreeValue): string {
  if (Array.isArray(value)) return 'an array';
  if (value instanceof RefValue) return 'a @ref';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/** What each `@json` directive loaded, by its offset, so that positions can be worked out again without reading or reporting. */
type JsonResults = Map<number, Json | undefined>;

const silent: Reporter = { diagnostics: [], report() {}, reportRaw() {} };

// Builds the tree in one pass over the AST. The first pass records no positions: it only reports. When a check
// needs a position, the same pass runs again over the same AST with `positions` set and a silent reporter, which
// fills the position maps exactly as if they had been kept all along; paths are a stack pushed and popped in place.
class TreeBuilder {
  readonly root = newObject();
  readonly failed = new Set<string>();
  // The key span of every (object, key) set by an assignment, to report a key set twice.
  private readonly assigned = new Map<TreeObject, Map<string, Span>>();

  constructor(
    private readonly file: string,
    private readonly reporter: Reporter,
    private readonly loadJson: (node: DirectiveValue) => Json | undefined,
    private readonly positions: TreePositions | undefined,
  ) {}

  build(node: FileNode): void {
    this.positions?.values.set(pathKey([]), FILE_START);
    const path: Path = [];
    for (const assignment of node.assignments) this.assign(this.root, path, assignment);
    if (node.unparsed) this.markUnparsed(path, node.unparsed);
  }

  // A key whose value did not parse has a syntax error already: it counts as failed, not as missing.
  private markUnparsed(path: Path, keys: readonly KeyPath[]): void {
    const depth = path.length;
    for (const key of keys) {
      for (const segment of key.segments) {
        if (segment.qualifier !== undefined) path.push(segment.qualifier);
        path.push(segment.name);
      }
      this.failed.add(pathKey(path));
      path.length = depth;
    }
  }

  private assign(target: TreeObject, path: Path, node: Assignment): void {
    const depth = path.length;
    const segments = node.key.segments;
    let container: TreeObject | undefined = target;
    for (let i = 0; i < segments.length && container !== undefined; i++) {
      const segment = segments[i];
      if (segment.qualifier !== undefined) container = this.descend(container, path, segment.qualifier, segment.span);
      if (container === undefined) break;
      if (i < segments.length - 1) container = this.descend(container, path, segment.name, segment.span);
      else {
        path.push(segment.name);
        this.setValue(container, path, segment.name, segment.span, node.value);
      }
    }
    path.length = depth;
  }

  // One step into an object along a dotted key, creating the object when it is not there yet.
  private descend(container: TreeObject, path: Path, name: string, span: Span): TreeObject | undefined {
    path.push(name);
    const existing = container[name];
    if (existing === undefined) {
      const created = newObject();
      container[name] = created;
      if (this.positions) {
        const key = pathKey(path);
        this.positions.keys.set(key, span);
        this.positions.values.set(key, span);
      }
      return created;
    }
    if (isTreeObject(existing)) return existing;
    this.conflict(path, span, `is already ${describe(existing)}, so it cannot hold keys`);
    return undefined;
  }

  private markAssigned(container: TreeObject, name: string, keySpan: Span): void {
    let names = this.assigned.get(container);
    if (names === undefined) {
      names = new Map();
      this.assigned.set(container, names);
    }
    names.set(name, keySpan);
  }

  private setValue(container: TreeObject, path: Path, name: string, keySpan: Span, node: ValueNode): void {
    const first = this.assigned.get(container)?.get(name);
    if (first) {
      this.reporter.report(
        'mtr:keys:duplicate',
        { key: displayPath(path), line: first.start.line },
        this.file,
        keySpan,
      );
      return;
    }
    const existing = container[name];
    if (existing !== undefined) {
      if (node.kind === 'Object' && isTreeObject(existing)) {
        this.markAssigned(container, name, keySpan);
        for (const entry of node.entries) this.assign(existing, path, entry);
        if (node.unparsed) this.markUnparsed(path, node.unparsed);
        return;
      }
      this.conflict(path, keySpan, 'is already an object of keys, so it cannot be set to a value');
      return;
    }
    this.markAssigned(container, name, keySpan);
    this.positions?.keys.set(pathKey(path), keySpan);
    const value = this.convert(node, path);
    if (value !== undefined) container[name] = value;
  }

  private conflict(path: Path, span: Span, detail: string): void {
    this.failed.add(pathKey(path));
    this.reporter.report('mtr:keys:conflict', { key: displayPath(path), detail }, this.file, span);
  }

  private convert(node: ValueNode, path: Path): TreeValue | undefined {
    if (this.positions) {
      const key = pathKey(path);
      this.positions.values.set(key, node.span);
      if (node.kind === 'String') this.positions.raws.set(key, node.raw);
    }
    switch (node.kind) {
      case 'String':
      case 'Number':
      case 'Boolean':
        return node.value;
      case 'Null':
        return null;
      case 'Array': {
        const out: TreeValue[] = [];
        const elements = node.elements;
        for (let i = 0; i < elements.length; i++) {
          path.push(i);
          const value = this.convert(elements[i], path);
          path.pop();
          out.push(value === undefined ? null : value);
        }
        return out;
      }
      case 'Object': {
        const out = newObject();
        for (const entry of node.entries) this.assign(out, path, entry);
        if (node.unparsed) this.markUnparsed(path, node.unparsed);
        return out;
      }
      case 'Directive':
        return this.directive(node, path);
    }
  }

  private directive(node: DirectiveValue, path: Path): TreeValue | undefined {
    if (node.name !== 'ref' && node.name !== 'json') {
      const suggestion = node.name.toLowerCase().includes('ref')
        ? '; did you mean @ref?'
        : node.name.toLowerCase().includes('json')
          ? '; did you mean @json?'
          : '';
      this.reporter.report('mtr:directive:unknown', { name: node.name, suggestion }, this.file, node.span);
      this.failed.add(pathKey(path));
      return undefined;
    }
    if (node.args.length !== 1) {
      this.reporter.report('mtr:directive:arguments', { name: node.name }, this.file, node.span);
      this.failed.add(pathKey(path));
      return undefined;
    }
    if (node.name === 'ref') return new RefValue(node.args[0].value, node.span);
    const json = this.loadJson(node);
    if (json === undefined) {
      this.failed.add(pathKey(path));
      return undefined;
    }
    this.positions?.values.set(pathKey(path), node.span);
    return fromJson(json);
  }
}

class BuiltTree implements ValueTree {
  private computed: TreePositions | undefined;

  constructor(
    readonly file: string,
    readonly root: TreeObject,
    readonly failed: Set<string>,
    private readonly source: FileNode | (() => FileNode),
    private readonly json: JsonResults | undefined,
  ) {}

  get positions(): TreePositions {
    if (this.computed === undefined) {
      const positions: TreePositions = { values: new Map(), keys: new Map(), raws: new Map() };
      const json = this.json;
      const ast = typeof this.source === 'function' ? this.source() : this.source;
      new TreeBuilder(this.file, silent, (node) => json?.get(node.span.start.offset), positions).build(ast);
      this.computed = positions;
    }
    return this.computed;
  }
}

/**
 * Builds the plain value tree of a parsed file, deep-merging dotted keys and reporting duplicates and conflicts.
 * With `reparse`, the tree does not keep the AST: positions, when asked for, come from the AST parsed again,
 * which keeps far less memory alive while a whole repo compiles.
 */
export function buildTree(
  node: FileNode,
  reporter: Reporter,
  loadJson: JsonLoader,
  reparse?: () => FileNode,
): ValueTree {
  let json: JsonResults | undefined;
  const load = (directive: DirectiveValue): Json | undefined => {
    const value = loadJson(directive.args[0].value, node.file, directive.span);
    json ??= new Map();
    json.set(directive.span.start.offset, value);
    return value;
  };
  const builder = new TreeBuilder(node.file, reporter, load, undefined);
  builder.build(node);
  return new BuiltTree(node.file, builder.root, builder.failed, reparse ?? node, json);
}
