import { BoundedMap } from '@maitento/egress/static';
import type { Ajv, ErrorObject } from 'ajv';
import { newAjv, type SchemaDialect, schemaDialect } from './json-schema-dialect.js';
import { linearPatternProblem } from './linear-pattern.js';
import type { Connector, Json, JsonSchema } from './resources.js';
import type { Reporter } from './report.js';
import { displayPath, spanOf, type ValueTree } from './value-tree.js';

/** The options every JSON Schema of a config repo is compiled with (the gateway validates with the same). */
export const AJV_OPTIONS = { strict: false, allErrors: true, validateSchema: true } as const;

// One checker per dialect, made when a schema of that dialect is first met.
const checkers = new Map<SchemaDialect, Ajv>();

function checkerFor(dialect: SchemaDialect): Ajv {
  let ajv = checkers.get(dialect);
  if (ajv === undefined) {
    ajv = newAjv(dialect, AJV_OPTIONS);
    checkers.set(dialect, ajv);
  }
  return ajv;
}

/** A problem found in a schema: where inside it (JSON pointer parts) and what. */
interface SchemaProblem {
  at: string[];
  detail: string;
}

// Repos repeat schemas (one response shape for many endpoints), so verdicts are kept by the schema's JSON
// text for the life of the process.
const cache = new BoundedMap<string, SchemaProblem[]>(10_000);

function pointerParts(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

// One problem per wrong value: ajv gives several for one (`type = "money"` is not in the enum, not an array, and
// matches no branch of the anyOf); the first is the one a person acts on.
function fromAjvErrors(errors: ErrorObject[] | null | undefined): SchemaProblem[] {
  if (!errors || errors.length === 0) return [{ at: [], detail: 'ajv refused it' }];
  const seen = new Set<string>();
  const problems: SchemaProblem[] = [];
  for (const error of errors) {
    if (seen.has(error.instancePath)) continue;
    seen.add(error.instancePath);
    const at = pointerParts(error.instancePath);
    const where = at.length ? `${at.join('/')} ` : '';
    const allowed =
      error.params && 'allowedValues' in error.params ? ` (${error.params.allowedValues.join(', ')})` : '';
    problems.push({ at, detail: `${where}${error.message ?? 'is invalid'}${allowed}` });
  }
  return problems;
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
 * (a repo schema has no other schemas to point at) and a `pattern` that is not a valid regular expression or not one
 * the linear-time engine runs.
 */
function walkProblems(root: unknown, node: unknown, at: string[], out: SchemaProblem[]): void {
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) walkProblems(root, node[i], [...at, String(i)], out);
    return;
  }
  if (!isNode(node)) return;
  for (const [key, value] of Object.entries(node)) {
    // Values under these keywords are data, not subschemas.
    if (key === 'enum' || key === 'const' || key === 'default' || key === 'examples') continue;
    if (key === '$ref' && typeof value === 'string' && !resolvePointer(root, value)) {
      out.push({ at: [...at, key], detail: `$ref ${value} does not resolve inside this schema` });
    }
    if (key === 'pattern' && typeof value === 'string') {
      const problem = patternProblem(value);
      if (problem !== undefined) out.push({ at: [...at, key], detail: `pattern ${JSON.stringify(value)} ${problem}` });
    }
    if (key === 'patternProperties' && isNode(value)) {
      for (const source of Object.keys(value)) {
        const problem = patternProblem(source);
        if (problem !== undefined)
          out.push({ at: [...at, key, source], detail: `${JSON.stringify(source)} ${problem}` });
      }
    }
    walkProblems(root, value, [...at, key], out);
  }
}

// Why a pattern cannot be used: not an ECMA-262 regular expression (JSON Schema's syntax), or not one the linear-time
// engine runs (decision 0405); undefined when it can.
function patternProblem(source: string): string | undefined {
  try {
    new RegExp(source, 'u');
  } catch {
    return 'is not a valid regular expression';
  }
  return linearPatternProblem(source);
}

/**
 * Checks a JSON Schema as ajv 8 would compile it and returns everything that is wrong (empty when it is valid):
 * the schema is validated against the meta-schema of its dialect, draft-07 or 2020-12 as its `$schema` says
 * (with ajv-formats' formats known, every error, one per wrong value), every `$ref` must resolve and every pattern must be a regular expression. Code generation
 * (`ajv.compile`) is skipped: it cost about 1 ms a schema and dominated the compile; the gateway compiles each
 * schema when it is first called.
 */
export function schemaProblems(schema: JsonSchema): SchemaProblem[] {
  const key = JSON.stringify(schema);
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  const dialect = schemaDialect(schema);
  let problems: SchemaProblem[];
  if (dialect === undefined) {
    const $schema = JSON.stringify((schema as { $schema?: unknown }).$schema);
    problems = [
      {
        at: ['$schema'],
        detail: `$schema ${$schema} is not supported: schemas are JSON Schema draft-07 or 2020-12; remove $schema (draft-07) or use http://json-schema.org/draft-07/schema# or https://json-schema.org/draft/2020-12/schema`,
      },
    ];
  } else {
    const checker = checkerFor(dialect);
    try {
      problems = checker.validateSchema(schema) ? [] : fromAjvErrors(checker.errors);
    } catch (error) {
      problems = [{ at: [], detail: error instanceof Error ? error.message : String(error) }];
    }
  }
  walkProblems(schema, schema, [], problems);
  cache.set(key, problems);
  return problems;
}

/** Reports every problem of a `schema.request` or `schema.response` that ajv cannot compile, each at its wrong value. */
export function checkSchema(
  schema: JsonSchema | undefined,
  path: string[],
  tree: ValueTree,
  reporter: Reporter,
): boolean {
  if (schema === undefined) return true;
  const problems = schemaProblems(schema);
  for (const problem of problems) {
    reporter.report(
      'mtr:schema:invalid',
      { key: displayPath(path), detail: problem.detail },
      tree.file,
      spanOf(tree, [...path, ...problem.at]),
    );
  }
  return problems.length === 0;
}

/**
 * Why a remote MCP tool's input schema cannot be an MCP connector's `schema.request`, or undefined when it can:
 * it must be valid JSON Schema (as a repo schema is) and an object schema, `type = "object"` or no `type`
 * with `properties` (the MCP specification requires `type: "object"`: a tool's arguments are a JSON object).
 */
export function remoteSchemaProblem(schema: JsonSchema): string | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    return `is ${JSON.stringify(schema)}, not an object schema: an MCP tool's arguments are a JSON object`;
  }
  const problems = schemaProblems(schema);
  if (problems.length > 0) {
    return problems
      .map((p) =>
        p.at.length > 0 && !p.detail.startsWith(p.at.join('/')) ? `${p.at.join('/')}: ${p.detail}` : p.detail,
      )
      .join('; ');
  }
  return notObjectSchema(schema, "an MCP tool's input schema");
}

// Why a valid schema is not an object schema (`type: "object"`, or no `type` but `properties`), or undefined.
function notObjectSchema(schema: { [key: string]: Json }, what: string): string | undefined {
  const type = schema.type;
  const isObjectProperties = typeof schema.properties === 'object' && schema.properties !== null;
  if (type === 'object' || (type === undefined && isObjectProperties)) return undefined;
  return type === undefined
    ? `has no type and no properties; ${what} must have type "object"`
    : `has type ${JSON.stringify(type)}; ${what} must have type "object"`;
}

/**
 * Checks an interaction's `result.schema`: valid JSON Schema (as any repo schema) and an object schema, since a
 * run's structured result is a JSON object (and providers' structured output asks for one).
 */
export function checkResultSchema(schema: JsonSchema | undefined, tree: ValueTree, reporter: Reporter): void {
  if (schema === undefined) return;
  if (!checkSchema(schema, ['result', 'schema'], tree, reporter)) return;
  const problem =
    typeof schema === 'boolean'
      ? `is ${schema}, not an object schema; an interaction's result schema must have type "object"`
      : notObjectSchema(schema, "an interaction's result schema");
  if (problem === undefined) return;
  reporter.report(
    'mtr:schema:invalid',
    { key: 'result.schema', detail: problem },
    tree.file,
    spanOf(tree, ['result', 'schema']),
  );
}

/**
 * Checks the remote tool's input schema of an MCP connector (known once a deploy has listed the server's
 * tools): an error on the connector's `tool` when it cannot be the connector's `schema.request`.
 */
export function checkRemoteSchema(connector: Connector, tree: ValueTree, reporter: Reporter): boolean {
  const schema = connector.schema.request;
  if (connector.mcp === undefined || schema === undefined) return true;
  const problem = remoteSchemaProblem(schema);
  if (problem === undefined) return true;
  reporter.report(
    'mtr:schema:invalid',
    {
      key: `the input schema of the remote MCP tool ${connector.mcp.tool} (from the server's tools/list)`,
      detail: problem,
    },
    tree.file,
    spanOf(tree, ['tool']),
  );
  return false;
}
