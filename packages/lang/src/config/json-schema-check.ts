import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { JsonSchema } from './resources.js';
import type { Reporter } from './report.js';
import { displayPath, spanOf, type ValueTree } from './value-tree.js';

// ajv-formats is CommonJS whose default export is the plugin itself.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** The options every JSON Schema of a config repo is compiled with (the gateway validates with the same). */
export const AJV_OPTIONS = { strict: false, allErrors: false, validateSchema: true } as const;

let shared: Ajv | undefined;

function newAjv(): Ajv {
  const ajv = new Ajv(AJV_OPTIONS);
  addFormats(ajv);
  return ajv;
}

/** A problem found in a schema: where inside it (JSON pointer parts) and what. */
interface SchemaProblem {
  at: string[];
  detail: string;
}

// Repos repeat schemas (one response shape for many endpoints), so verdicts are kept by the schema's JSON
// text for the life of the process.
const cache = new Map<string, SchemaProblem | null>();
const CACHE_LIMIT = 10_000;

function pointerParts(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function fromAjvErrors(errors: ErrorObject[] | null | undefined): SchemaProblem {
  const error = errors?.[0];
  if (!error) return { at: [], detail: 'ajv refused it' };
  const at = pointerParts(error.instancePath);
  const where = at.length ? `${at.join('/')} ` : '';
  const allowed = error.params && 'allowedValues' in error.params ? ` (${error.params.allowedValues.join(', ')})` : '';
  return { at, detail: `${where}${error.message ?? 'is invalid'}${allowed}` };
}

type SchemaNode = { [key: string]: unknown };

function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function resolvePointer(root: unknown, ref: string): boolean {
  if (ref === '#') return true;
  if (!ref.startsWith('#/')) return false;
  let node: unknown = root;
  for (const part of pointerParts(decodeURIComponent(ref.slice(1)))) {
    if (Array.isArray(node)) node = node[Number(part)];
    else if (isNode(node)) node = Object.hasOwn(node, part) ? node[part] : undefined;
    else return false;
    if (node === undefined) return false;
  }
  return true;
}

/**
 * What ajv's compilation would refuse beyond the meta-schema: a `$ref` that does not resolve inside the schema
 * (a repo schema has no other schemas to point at) and a `pattern` that is not a valid regular expression.
 */
function walkProblem(root: unknown, node: unknown, at: string[]): SchemaProblem | null {
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const found = walkProblem(root, node[i], [...at, String(i)]);
      if (found) return found;
    }
    return null;
  }
  if (!isNode(node)) return null;
  for (const [key, value] of Object.entries(node)) {
    // Values under these keywords are data, not subschemas.
    if (key === 'enum' || key === 'const' || key === 'default' || key === 'examples') continue;
    if (key === '$ref' && typeof value === 'string' && !resolvePointer(root, value)) {
      return { at: [...at, key], detail: `$ref ${value} does not resolve inside this schema` };
    }
    if (key === 'pattern' && typeof value === 'string' && !validRegExp(value)) {
      return { at: [...at, key], detail: `pattern ${JSON.stringify(value)} is not a valid regular expression` };
    }
    if (key === 'patternProperties' && isNode(value)) {
      const bad = Object.keys(value).find((p) => !validRegExp(p));
      if (bad !== undefined) {
        return { at: [...at, key, bad], detail: `${JSON.stringify(bad)} is not a valid regular expression` };
      }
    }
    const found = walkProblem(root, value, [...at, key]);
    if (found) return found;
  }
  return null;
}

function validRegExp(source: string): boolean {
  try {
    new RegExp(source, 'u');
    return true;
  } catch {
    return false;
  }
}

/**
 * Checks a JSON Schema as ajv 8 would compile it and returns what is wrong, or null when it is valid: the
 * schema is validated against the draft-07 meta-schema (with ajv-formats' formats known), every `$ref` must
 * resolve and every pattern must be a regular expression. Code generation (`ajv.compile`) is skipped: it cost
 * about 1 ms a schema and dominated the compile; the gateway compiles each schema when it is first called.
 */
export function schemaProblem(schema: JsonSchema): SchemaProblem | null {
  const key = JSON.stringify(schema);
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  shared ??= newAjv();
  let problem: SchemaProblem | null = null;
  if (!shared.validateSchema(schema)) problem = fromAjvErrors(shared.errors);
  else problem = walkProblem(schema, schema, []);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, problem);
  return problem;
}

/** Reports a `schema.request` or `schema.response` that ajv cannot compile, at the value inside it that is wrong. */
export function checkSchema(
  schema: JsonSchema | undefined,
  path: string[],
  tree: ValueTree,
  reporter: Reporter,
): boolean {
  if (schema === undefined) return true;
  const problem = schemaProblem(schema);
  if (problem === null) return true;
  reporter.report(
    'mtr:schema:invalid',
    { key: displayPath(path), detail: problem.detail },
    tree.file,
    spanOf(tree, [...path, ...problem.at]),
  );
  return false;
}
