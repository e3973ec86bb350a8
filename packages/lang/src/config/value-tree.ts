import type { Assignment, FileNode, KeySegment, Span, ValueNode } from '../syntax/ast.js';
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

/** The plain value tree of one file, with the position of every value and key it was written with. */
export interface ValueTree {
  file: string;
  root: TreeObject;
  /** Span of the value at a path (see {@link pathKey}). */
  values: Map<string, Span>;
  /** Span of the key that set the value at a path. */
  keys: Map<string, Span>;
  /** The raw text of string values, for positions inside them. */
  raws: Map<string, string>;
  /** Paths whose value was refused (a conflict, a bad directive), so later checks do not report them again. */
  failed: Set<string>;
}

/** Loads the JSON file an `@json` names; reports its own diagnostics and returns undefined on failure. */
export type JsonLoader = (path: string, from: string, span: Span) => Json | undefined;

/** The key of a path in the span maps. */
export function pathKey(path: readonly (string | number)[]): string {
  return path.join('\u0000');
}

/** True for a tree object (not an array, a reference or a scalar). */
export function isTreeObject(value: TreeValue | undefined): value is TreeObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof RefValue);
}

/** The span of the value at `path`, or of its nearest written ancestor (values from `@json` files). */
export function spanOf(tree: ValueTree, path: readonly (string | number)[]): Span {
  for (let n = path.length; n >= 0; n--) {
    const span = tree.values.get(pathKey(path.slice(0, n)));
    if (span) return span;
  }
  return FILE_START;
}

/** The span of the key that set `path`, falling back to the value's span. */
export function keySpanOf(tree: ValueTree, path: readonly (string | number)[]): Span {
  return tree.keys.get(pathKey(path)) ?? spanOf(tree, path);
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

function newObject(): TreeObject {
  return Object.create(null) as TreeObject;
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

class TreeBuilder {
  readonly tree: ValueTree;
  private readonly assigned = new Map<string, Span>();

  constructor(
    file: string,
    private readonly reporter: Reporter,
    private readonly loadJson: JsonLoader,
  ) {
    this.tree = { file, root: newObject(), values: new Map(), keys: new Map(), raws: new Map(), failed: new Set() };
  }

  assign(target: TreeObject, base: (string | number)[], node: Assignment): void {
    const parts: { name: string; span: Span }[] = [];
    for (const segment of node.key.segments) this.expand(segment, parts);
    let container = target;
    const path = base.slice();
    for (let i = 0; i < parts.length - 1; i++) {
      const { name, span } = parts[i];
      path.push(name);
      const existing = container[name];
      if (existing === undefined) {
        const created = newObject();
        container[name] = created;
        this.tree.keys.set(pathKey(path), span);
        this.tree.values.set(pathKey(path), span);
        container = created;
      } else if (isTreeObject(existing)) {
        container = existing;
      } else {
        this.conflict(path, span, `is already ${describe(existing)}, so it cannot hold keys`);
        return;
      }
    }
    const last = parts[parts.length - 1];
    if (!last) return;
    path.push(last.name);
    this.setValue(container, path, last.name, last.span, node.value);
  }

  private expand(segment: KeySegment, parts: { name: string; span: Span }[]): void {
    if (segment.qualifier !== undefined) parts.push({ name: segment.qualifier, span: segment.span });
    parts.push({ name: segment.name, span: segment.span });
  }

  private setValue(container: TreeObject, path: (string | number)[], name: string, keySpan: Span, node: ValueNode) {
    const key = pathKey(path);
    const first = this.assigned.get(key);
    if (first) {
      this.reporter.report(
        'mtr:keys:duplicate',
        { key: displayPath(path), line: first.start.line },
        this.tree.file,
        keySpan,
      );
      return;
    }
    const existing = container[name];
    if (existing !== undefined) {
      if (node.kind === 'Object' && isTreeObject(existing)) {
        this.assigned.set(key, keySpan);
        for (const entry of node.entries) this.assign(existing, path, entry);
        return;
      }
      this.conflict(path, keySpan, 'is already an object of keys, so it cannot be set to a value');
      return;
    }
    this.assigned.set(key, keySpan);
    this.tree.keys.set(key, keySpan);
    const value = this.convert(node, path);
    if (value !== undefined) container[name] = value;
  }

  private conflict(path: (string | number)[], span: Span, detail: string): void {
    this.tree.failed.add(pathKey(path));
    this.reporter.report('mtr:keys:conflict', { key: displayPath(path), detail }, this.tree.file, span);
  }

  convert(node: ValueNode, path: (string | number)[]): TreeValue | undefined {
    const key = pathKey(path);
    this.tree.values.set(key, node.span);
    switch (node.kind) {
      case 'String':
        this.tree.raws.set(key, node.raw);
        return node.value;
      case 'Number':
        return node.value;
      case 'Boolean':
        return node.value;
      case 'Null':
        return null;
      case 'Array': {
        const out: TreeValue[] = [];
        node.elements.forEach((element, i) => {
          const value = this.convert(element, [...path, i]);
          out.push(value === undefined ? null : value);
        });
        return out;
      }
      case 'Object': {
        const out = newObject();
        for (const entry of node.entries) this.assign(out, path, entry);
        return out;
      }
      case 'Directive':
        return this.directive(node, path);
    }
  }

  private directive(node: Extract<ValueNode, { kind: 'Directive' }>, path: (string | number)[]): TreeValue | undefined {
    if (node.name !== 'ref' && node.name !== 'json') {
      const suggestion = node.name.toLowerCase().includes('ref')
        ? '; did you mean @ref?'
        : node.name.toLowerCase().includes('json')
          ? '; did you mean @json?'
          : '';
      this.reporter.report('mtr:directive:unknown', { name: node.name, suggestion }, this.tree.file, node.span);
      this.tree.failed.add(pathKey(path));
      return undefined;
    }
    if (node.args.length !== 1) {
      this.reporter.report('mtr:directive:arguments', { name: node.name }, this.tree.file, node.span);
      this.tree.failed.add(pathKey(path));
      return undefined;
    }
    const arg = node.args[0].value;
    if (node.name === 'ref') return new RefValue(arg, node.span);
    const json = this.loadJson(arg, this.tree.file, node.span);
    if (json === undefined) {
      this.tree.failed.add(pathKey(path));
      return undefined;
    }
    this.tree.values.set(pathKey(path), node.span);
    return fromJson(json);
  }
}

/** Builds the plain value tree of a parsed file, deep-merging dotted keys and reporting duplicates and conflicts. */
export function buildTree(node: FileNode, reporter: Reporter, loadJson: JsonLoader): ValueTree {
  const builder = new TreeBuilder(node.file, reporter, loadJson);
  builder.tree.values.set(pathKey([]), FILE_START);
  for (const assignment of node.assignments) builder.assign(builder.tree.root, [], assignment);
  return builder.tree;
}
