import { BoundedMap } from '@maitento/egress';
import type { JsonSchema } from '@maitento/lang';
// The one maker of ajv instances, from its own entry point: importing the compiler's index would load chevrotain.
import { newAjv, type SchemaDialect, schemaDialect } from '@maitento/lang/json-schema';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';

const OPTIONS = { allErrors: true, strict: false, validateFormats: true } as const;

// One Ajv per dialect checks schemas against its meta-schema; validateSchema never adds the schema to it.
const checkers = new Map<SchemaDialect, Ajv>();

/** A compiled validator and the Ajv instance that owns it: dropping the entry frees both. */
function compile(schema: JsonSchema): ValidateFunction {
  // `$schema` chooses the dialect: draft-07 (also without one) or 2020-12; any other is refused.
  const dialect = schemaDialect(schema);
  if (dialect === undefined) {
    throw new Error(
      `schema.$schema ${JSON.stringify((schema as { $schema?: unknown }).$schema)} is not supported: draft-07 or 2020-12`,
    );
  }
  let checker = checkers.get(dialect);
  if (checker === undefined) {
    checker = newAjv(dialect, OPTIONS);
    checkers.set(dialect, checker);
  }
  if (!checker.validateSchema(schema)) {
    throw new Error(checker.errorsText(checker.errors, { dataVar: 'schema' }));
  }
  // A fresh instance per schema: two schemas with one $id never meet, and nothing outlives the cache entry.
  const ajv = newAjv(dialect, { ...OPTIONS, validateSchema: false, meta: false });
  return ajv.compile(schema);
}

/**
 * Compiled validators keyed by schema content (compiling takes milliseconds, validating microseconds), the
 * least recently used dropped past `limit`, each with its own Ajv instance.
 */
export class ValidatorCache {
  readonly #entries: BoundedMap<string, ValidateFunction>;

  constructor(readonly limit: number) {
    this.#entries = new BoundedMap(limit);
  }

  /** How many validators are kept. */
  get size(): number {
    return this.#entries.size;
  }

  /** The validator of `schema`, compiled on first use; throws when the schema cannot be compiled. */
  get(schema: JsonSchema): ValidateFunction {
    const key = JSON.stringify(schema);
    let validate = this.#entries.get(key);
    if (validate === undefined) {
      validate = compile(schema);
      this.#entries.set(key, validate);
    }
    return validate;
  }
}

const shared = new ValidatorCache(2_000);

/** The compiled validator of `schema`, compiled once per distinct schema text; throws when it cannot be compiled. */
export function validatorFor(schema: JsonSchema): ValidateFunction {
  return shared.get(schema);
}

/** Turns ajv errors into short lines a model can act on, naming each field as `prefix.a.b`. */
export function describeErrors(errors: ErrorObject[] | null | undefined, prefix: string): string[] {
  if (!errors) return [];
  const lines: string[] = [];
  for (const error of errors) {
    const where =
      prefix +
      error.instancePath
        .split('/')
        .slice(1)
        .map((p) => `.${p.replace(/~1/g, '/').replace(/~0/g, '~')}`)
        .join('');
    let line: string;
    if (error.keyword === 'required') line = `${where}.${String(error.params.missingProperty)} is required`;
    else if (error.keyword === 'additionalProperties')
      line = `${where}.${String(error.params.additionalProperty)} is not allowed`;
    else if (error.keyword === 'enum')
      line = `${where} must be one of ${JSON.stringify(error.params.allowedValues as unknown)}`;
    else line = `${where} ${error.message ?? 'is invalid'}`;
    if (!lines.includes(line)) lines.push(line);
  }
  return lines;
}
