import { didYouMean } from '../diagnostics/did-you-mean.js';
import { yesOrNo } from '../syntax/to-ast.js';
import type { ResourceKind } from './resources.js';
import { didYouMeanText, type Reporter } from './report.js';
import {
  displayPath,
  isTreeObject,
  keySpanOf,
  pathKey,
  RefValue,
  spanOf,
  type TreeValue,
  type ValueTree,
} from './value-tree.js';

/** What a `@ref` may name: a resource kind, or a secret (which lives on the server). */
export type RefKind = ResourceKind | 'secret';

/** The expected shape of a value of a resource file. */
export type Shape =
  | {
      type: 'string';
      values?: readonly string[];
      /** Values that mean something elsewhere but not here: each with why not and what to write instead. */
      refused?: Readonly<Record<string, { detail: string; instead: string }>>;
      maxLength?: number;
      check?: (value: string) => string | undefined;
    }
  | { type: 'number' }
  | { type: 'boolean' }
  | { type: 'ref'; kind: RefKind }
  | {
      type: 'object';
      name: string;
      properties: Readonly<Record<string, Property>>;
      /** Properties that other kinds have but this one refuses, each with the hint of why (not "did you mean"). */
      refused?: Readonly<Record<string, string>>;
      /**
       * Groups of properties of which an object holds exactly one (a function's `ref` or `agent`). The checks that
       * report it live with the kind (agent-checks.ts); editors offer no second member of a group.
       */
      exclusive?: readonly (readonly string[])[];
    }
  | { type: 'map'; values: Shape }
  | { type: 'array'; items: Shape }
  | { type: 'json' }
  | { type: 'schema' };

/** One property of an object shape. */
export interface Property {
  shape: Shape;
  required?: boolean;
  /** What the property is for, shown by editors (completion, hover). */
  doc?: string;
}

/** A `@ref` found where the shape expects one, to resolve once every resource is known. */
export interface FoundRef {
  ref: RefValue;
  kind: RefKind;
  path: (string | number)[];
}

const KIND_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object { ... }',
  map: 'an object { ... }',
  array: 'an array [ ... ]',
  schema: 'a JSON Schema (an object, true or false)',
};

function actualWord(value: TreeValue): string {
  if (value === null) return 'null';
  if (value instanceof RefValue) return `@ref("${value.name}")`;
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'boolean') return String(value);
  return `the ${typeof value} ${value}`;
}

class ShapeChecker {
  ok = true;

  constructor(
    private readonly tree: ValueTree,
    private readonly reporter: Reporter,
    private readonly refs: FoundRef[],
  ) {}

  private typeError(path: (string | number)[], expected: string, value: TreeValue, advice = ''): void {
    this.ok = false;
    this.reporter.report(
      'mtr:property:type',
      { key: displayPath(path), expected, actual: actualWord(value) + advice },
      this.tree.file,
      spanOf(this.tree, path),
    );
  }

  // `path` is a stack: each step pushes its key and pops it again, and only a found reference keeps a copy.
  check(value: TreeValue, shape: Shape, path: (string | number)[]): void {
    switch (shape.type) {
      case 'string':
        if (typeof value !== 'string') {
          this.typeError(path, 'a string', value);
          return;
        }
        this.string(value, shape, path);
        return;
      case 'number':
        if (typeof value !== 'number') this.typeError(path, KIND_WORDS.number, value);
        return;
      case 'boolean': {
        if (typeof value === 'boolean') return;
        // The string "yes" (as the bare word's message allows for text) on a yes-or-no property: say which.
        const flag = typeof value === 'string' ? yesOrNo(value) : undefined;
        this.typeError(path, KIND_WORDS.boolean, value, flag && ` (write ${flag}, without quotes)`);
        return;
      }
      case 'ref':
        if (!(value instanceof RefValue)) {
          this.typeError(path, `a reference @ref("<${shape.kind} name>")`, value);
          return;
        }
        this.refs.push({ ref: value, kind: shape.kind, path: path.slice() });
        return;
      case 'object':
        if (!isTreeObject(value)) {
          this.typeError(path, KIND_WORDS.object, value);
          return;
        }
        this.object(value, shape, path);
        return;
      case 'map':
        if (!isTreeObject(value)) {
          this.typeError(path, KIND_WORDS.map, value);
          return;
        }
        for (const k in value) {
          path.push(k);
          this.check(value[k], shape.values, path);
          path.pop();
        }
        return;
      case 'array':
        if (!Array.isArray(value)) {
          this.typeError(path, KIND_WORDS.array, value);
          return;
        }
        for (let i = 0; i < value.length; i++) {
          path.push(i);
          this.check(value[i], shape.items, path);
          path.pop();
        }
        return;
      case 'schema':
        if (!isTreeObject(value) && typeof value !== 'boolean') {
          this.typeError(path, KIND_WORDS.schema, value);
          return;
        }
        this.noRefs(value, path);
        return;
      case 'json':
        this.noRefs(value, path);
        return;
    }
  }

  private string(value: string, shape: Extract<Shape, { type: 'string' }>, path: (string | number)[]): void {
    const refused = shape.refused && Object.hasOwn(shape.refused, value) ? shape.refused[value] : undefined;
    if (refused) {
      this.ok = false;
      this.reporter.report(
        'mtr:property:value',
        { key: displayPath(path), detail: refused.detail, allowed: refused.instead },
        this.tree.file,
        spanOf(this.tree, path),
      );
      return;
    }
    if (shape.values && !shape.values.includes(value)) {
      this.ok = false;
      const guess = didYouMean(value, [...shape.values]);
      this.reporter.report(
        'mtr:property:value',
        {
          key: displayPath(path),
          detail: `is ${JSON.stringify(value)}; it must be one of ${shape.values.map((v) => JSON.stringify(v)).join(', ')}`,
          allowed: didYouMeanText(guess),
        },
        this.tree.file,
        spanOf(this.tree, path),
      );
      return;
    }
    if (shape.maxLength !== undefined && value.length > shape.maxLength) {
      this.ok = false;
      this.reporter.report(
        'mtr:property:too-long',
        { key: displayPath(path), length: value.length, max: shape.maxLength },
        this.tree.file,
        spanOf(this.tree, path),
      );
      return;
    }
    const problem = shape.check?.(value);
    if (problem) {
      this.ok = false;
      this.reporter.report(
        'mtr:property:value',
        { key: displayPath(path), detail: problem, allowed: '' },
        this.tree.file,
        spanOf(this.tree, path),
      );
    }
  }

  private object(
    value: Record<string, TreeValue>,
    shape: Extract<Shape, { type: 'object' }>,
    path: (string | number)[],
  ) {
    const properties = shape.properties;
    let guessed: Set<string> | undefined;
    // Tree objects inherit no keys, so `for in` sees exactly their own, in the order Object.keys gives.
    for (const key in value) {
      const property = Object.hasOwn(properties, key) ? properties[key] : undefined;
      path.push(key);
      const refused = shape.refused && Object.hasOwn(shape.refused, key) ? shape.refused[key] : undefined;
      if (property === undefined && refused !== undefined) {
        this.ok = false;
        this.reporter.report(
          'mtr:property:unknown',
          { where: shape.name, name: key, suggestion: refused },
          this.tree.file,
          keySpanOf(this.tree, path),
        );
      } else if (property === undefined) {
        this.ok = false;
        const known = Object.keys(properties);
        const guess = didYouMean(key, known);
        if (guess) {
          guessed ??= new Set();
          guessed.add(guess);
        }
        this.reporter.report(
          'mtr:property:unknown',
          {
            where: shape.name,
            name: key,
            suggestion: guess ? didYouMeanText(guess) : `the properties are ${known.join(', ')}`,
          },
          this.tree.file,
          keySpanOf(this.tree, path),
        );
      } else this.check(value[key], property.shape, path);
      path.pop();
    }
    const failed = this.tree.failed;
    // A value refused while building the tree (or the object holding it) was reported already.
    if (failed.size > 0 && failed.has(pathKey(path))) return;
    for (const key in properties) {
      // A misspelt required property is reported once, as unknown with "did you mean".
      if (!properties[key].required || value[key] !== undefined || guessed?.has(key)) continue;
      if (failed.size > 0 && failed.has(pathKey([...path, key]))) continue;
      this.ok = false;
      this.reporter.report(
        'mtr:property:required',
        { where: shape.name, name: key },
        this.tree.file,
        spanOf(this.tree, path),
      );
    }
  }

  private noRefs(value: TreeValue, path: (string | number)[]): void {
    if (value instanceof RefValue) {
      this.ok = false;
      this.reporter.report(
        'mtr:property:type',
        { key: displayPath(path), expected: 'a plain value', actual: actualWord(value) },
        this.tree.file,
        value.span,
      );
    } else if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        path.push(i);
        this.noRefs(value[i], path);
        path.pop();
      }
    } else if (isTreeObject(value)) {
      for (const k in value) {
        path.push(k);
        this.noRefs(value[k], path);
        path.pop();
      }
    }
  }
}

/** Checks a file's tree against the shape of its kind; collects its references; returns false on any error. */
export function checkShape(tree: ValueTree, shape: Shape, reporter: Reporter, refs: FoundRef[]): boolean {
  const checker = new ShapeChecker(tree, reporter, refs);
  checker.check(tree.root, shape, []);
  return checker.ok;
}
