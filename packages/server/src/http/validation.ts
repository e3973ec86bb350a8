import { Ajv, type Options } from 'ajv';
import type { FastifyInstance, FastifySchemaValidationError } from 'fastify';
import { lazyValidator, WARM_UP_SCHEMA } from './lazy-schemas.js';

// Fastify's default Ajv drops unknown body fields and coerces types, so a typo such as
// `{ "dry_run": true }` would be silently ignored and `{ "value": 123 }` stored as "123".
// Bodies are JSON and are checked as sent; path parameters are text, so only they are coerced.
const BODY_OPTIONS: Options = { removeAdditional: false, coerceTypes: false, useDefaults: true, allErrors: false };
const PARAMS_OPTIONS: Options = { removeAdditional: false, coerceTypes: true, useDefaults: true, allErrors: false };

// Ajv turns any numeric text into a number ("1e2" → 100, " 1" → 1); a version in a path is digits only.
const DIGITS = /^[0-9]+$/;

function rejectsNonDigitIntegers(
  schema: Record<string, unknown>,
  validate: (data: unknown) => boolean,
): (data: unknown) => boolean {
  const properties = (schema.properties ?? {}) as Record<string, { type?: unknown }>;
  const integers = Object.keys(properties).filter((key) => properties[key]?.type === 'integer');
  if (integers.length === 0) return validate;
  const checked = (data: unknown) => {
    if (typeof data === 'object' && data !== null) {
      for (const key of integers) {
        const value = (data as Record<string, unknown>)[key];
        if (typeof value === 'string' && !DIGITS.test(value)) {
          checked.errors = [
            {
              instancePath: `/${key}`,
              schemaPath: '#/pattern',
              keyword: 'type',
              params: {},
              message: 'must be integer',
            },
          ];
          return false;
        }
      }
    }
    const ok = validate(data);
    checked.errors = (validate as { errors?: unknown }).errors;
    return ok;
  };
  checked.errors = undefined as unknown;
  return checked;
}

/**
 * Installs the request validators: bodies strictly as sent (unknown fields and wrong types refused),
 * path parameters coerced from text with integers written as plain digits. Each is compiled on its first use
 * (lazyValidator), not while the routes are added.
 */
export function installValidators(app: FastifyInstance): void {
  const body = new Ajv(BODY_OPTIONS);
  const params = new Ajv(PARAMS_OPTIONS);
  // An Ajv instance's first compile sets it up (~0.05 s): at start, so the first request pays only its own schema.
  body.compile(WARM_UP_SCHEMA);
  params.compile(WARM_UP_SCHEMA);
  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (httpPart === 'body') return lazyValidator(() => body.compile(schema));
    return lazyValidator(() => rejectsNonDigitIntegers(schema as Record<string, unknown>, params.compile(schema)));
  });
}

/** Words for the first validation error, naming an unknown field: `body has an unknown field dry_run`. */
export function formatSchemaError(errors: FastifySchemaValidationError[], dataVar: string): Error {
  const first = errors[0];
  const where = `${dataVar}${first?.instancePath ?? ''}`;
  const unknown = (first?.params as { additionalProperty?: unknown } | undefined)?.additionalProperty;
  if (first?.keyword === 'additionalProperties' && typeof unknown === 'string') {
    return new Error(`${where} has an unknown field ${unknown}`);
  }
  return new Error(`${where} ${first?.message ?? 'is not valid'}`);
}
