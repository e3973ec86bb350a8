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

// Compiling a schema costs far more than the rest of a check, and repos repeat schemas, so results are
// kept by the schema's JSON text for the life of the process.
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

/** Compiles a JSON Schema with ajv and returns what is wrong with it, or null when it is valid. */
export function schemaProblem(schema: JsonSchema): SchemaProblem | null {
  const key = JSON.stringify(schema);
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  // A schema with an $id registers under it; give it its own instance so repos cannot collide.
  const hasId = typeof schema === 'object' && schema !== null && '$id' in schema;
  shared ??= newAjv();
  const ajv = hasId ? newAjv() : shared;
  let problem: SchemaProblem | null = null;
  if (!ajv.validateSchema(schema)) {
    problem = fromAjvErrors(ajv.errors);
  } else {
    try {
      ajv.compile(schema);
    } catch (error) {
      problem = { at: [], detail: error instanceof Error ? error.message : String(error) };
    } finally {
      // Only the verdict is kept; ajv's own cache would otherwise hold every schema ever seen.
      if (typeof schema === 'object') ajv.removeSchema(schema);
    }
  }
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
