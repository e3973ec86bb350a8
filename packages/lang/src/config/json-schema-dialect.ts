import { Ajv, type Options } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { linearRegExp } from './linear-pattern.js';
import type { Json, JsonSchema } from './resources.js';

// ajv-formats is CommonJS whose default export is the plugin itself.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** The JSON Schema dialects a schema of Maitento may be written in: `$schema` chooses, draft-07 without one. */
export type SchemaDialect = 'draft-07' | '2020-12';

/** The `$schema` of each dialect, as a schema of that dialect declares it. */
export const DIALECT_URIS: Record<SchemaDialect, string> = {
  'draft-07': 'http://json-schema.org/draft-07/schema#',
  '2020-12': 'https://json-schema.org/draft/2020-12/schema',
};

const BY_URI = new Map<string, SchemaDialect>([
  ['http://json-schema.org/draft-07/schema#', 'draft-07'],
  ['http://json-schema.org/draft-07/schema', 'draft-07'],
  ['https://json-schema.org/draft/2020-12/schema', '2020-12'],
  ['https://json-schema.org/draft/2020-12/schema#', '2020-12'],
]);

/**
 * The dialect a schema declares with `$schema` (draft-07 when it declares none), or undefined when its `$schema`
 * names a dialect Maitento does not speak (draft-04, 2019-09, a URL of its own).
 */
export function schemaDialect(schema: JsonSchema): SchemaDialect | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'draft-07';
  const $schema = (schema as { $schema?: unknown }).$schema;
  if ($schema === undefined) return 'draft-07';
  return typeof $schema === 'string' ? BY_URI.get($schema) : undefined;
}

/**
 * The one place an Ajv instance is made, for the compiler and the gateway: Ajv for draft-07, Ajv2020 for 2020-12,
 * every `pattern` run on the linear-time engine ({@link linearRegExp}).
 */
export function newAjv(dialect: SchemaDialect, options: Options): Ajv {
  const withEngine: Options = { ...options, code: { ...options.code, regExp: linearRegExp } };
  const ajv = dialect === '2020-12' ? new Ajv2020(withEngine) : new Ajv(withEngine);
  addFormats(ajv);
  return ajv;
}

type RefSchemaObject = { [key: string]: Json };

function isRefObject(value: Json | undefined): value is RefSchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** How many `$ref`s in a row one lookup follows (a chain longer than this is left as written). */
const MAX_HOPS = 32;

/**
 * `schema` with a local `$ref` (`#/$defs/Customer`, `#/definitions/Customer`: a JSON Pointer into `root`, the body
 * schema that holds the definitions) replaced by what it points at, its other keywords kept beside (they apply too).
 * A schema without a `$ref`, a `$ref` to another document, or one that points at nothing is returned as it is.
 * `seen` collects the references followed, so a caller walking a recursive schema stops at a cycle.
 */
export function resolveLocalRef(root: Json | undefined, schema: Json, seen: Set<string> = new Set()): Json {
  let current = schema;
  for (let hop = 0; hop < MAX_HOPS && isRefObject(current) && typeof current.$ref === 'string'; hop++) {
    const ref = current.$ref;
    if (!ref.startsWith('#/') || seen.has(ref)) return current;
    let target: Json | undefined = root;
    for (const raw of ref.slice(2).split('/')) {
      const key = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
      target = isRefObject(target) && Object.hasOwn(target, key) ? target[key] : undefined;
    }
    if (!isRefObject(target)) return current;
    seen.add(ref);
    const { $ref: _, ...siblings } = current;
    current = { ...target, ...siblings };
  }
  return current;
}
