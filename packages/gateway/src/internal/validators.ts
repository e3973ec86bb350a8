import type { JsonSchema } from '@maitento/lang';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: under NodeNext the default import is `module.exports`, whose `default` is the plugin.
const addFormats = addFormatsModule.default;

const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: true });
addFormats(ajv);

// Compilation is slow (milliseconds) and validation fast, so validators are kept by schema text.
const cache = new Map<string, ValidateFunction>();
const MAX_CACHED = 2_000;

/** The compiled validator of `schema`, compiled once per distinct schema text. */
export function validatorFor(schema: JsonSchema): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = cache.get(key);
  if (validate === undefined) {
    validate = ajv.compile(schema);
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
    cache.set(key, validate);
  }
  return validate;
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
