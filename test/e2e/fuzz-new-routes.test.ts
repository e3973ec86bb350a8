import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runsRepoFiles } from './helpers/config-repo.js';
import { startRunsStack, useRunsStack } from './helpers/stack.js';

// Issue #46, test 2: "a schemathesis-style fuzz finds no 5xx on the new routes". Requests are generated from the
// OpenAPI document the real `mt serve` serves (its parameters' and bodies' JSON Schemas, turned into fast-check
// arbitraries below), mostly valid by their schema and some not (any JSON, any string), with values the server knows
// (a run waiting for its budget, the deployed names) mixed in, so that generated requests reach the handlers and not
// only the validation. Each answer must be below 500 and, when an error, carry its registry code. Bounded: at most
// RUNS requests and TIME_LIMIT_MS of generating (decision 0346).
const RUNS = 400;
const TIME_LIMIT_MS = 40_000;

/** The operations of issue #46: usage, quotas, budgets, limits (a tool's call), and deleting resources. */
const OPERATIONS = new Set([
  'getUsage',
  'getQuotas',
  'getNamespaceQuotas',
  'setNamespaceQuotas',
  'extendRunBudget',
  'callExtop',
  'deleteConnector',
  'deleteExtop',
  'deleteAgent',
  'deleteInteraction',
]);

type Schema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Schema;
}
interface Operation {
  method: string;
  path: string;
  operationId: string;
  parameters: Parameter[];
  body?: Schema;
}
interface GeneratedRequest {
  operationId: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: unknown;
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const INT32 = 2 ** 31 - 1;

/** A fast-check arbitrary of the values `schema` admits (the JSON Schema subset the server's TypeBox schemas use). */
function fromSchema(schema: Schema, doc: Schema, known: readonly string[]): fc.Arbitrary<unknown> {
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.replace('#/components/schemas/', '');
    return fromSchema((doc.components as { schemas: Record<string, Schema> }).schemas[name]!, doc, known);
  }
  const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (alternatives) return fc.oneof(...alternatives.map((s) => fromSchema(s, doc, known)));
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if ('const' in schema) return fc.constant(schema.const);
  switch (schema.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer': {
      const min = Math.max(Number(schema.minimum ?? -MAX_SAFE), -MAX_SAFE);
      const max = Math.min(Number(schema.maximum ?? MAX_SAFE), MAX_SAFE);
      if (max - min <= INT32) return fc.integer({ min, max });
      // fast-check's integers are 32-bit: the bounds themselves, and values near the lower one and anywhere.
      return fc.oneof(
        fc.constantFrom(min, max),
        fc.integer({ min, max: min + INT32 }),
        fc.maxSafeNat().map((n) => min + (n % (max - min))),
      );
    }
    case 'number':
      return fc.double({
        noNaN: true,
        noDefaultInfinity: true,
        min: Number(schema.minimum ?? -1e12),
        max: Number(schema.maximum ?? 1e12),
      });
    case 'string': {
      const maxLength = Math.min(Number(schema.maxLength ?? 40), 40);
      const minLength = Math.min(Number(schema.minLength ?? 0), maxLength);
      const own =
        typeof schema.pattern === 'string'
          ? fc
              .stringMatching(new RegExp(schema.pattern as string))
              .filter((s) => s.length >= minLength && s.length <= Number(schema.maxLength ?? Infinity))
          : fc.string({ minLength, maxLength });
      const fits = known.filter(
        (k) =>
          k.length >= minLength && (typeof schema.pattern !== 'string' || new RegExp(schema.pattern as string).test(k)),
      );
      return fits.length > 0 ? fc.oneof(own, fc.constantFrom(...fits)) : own;
    }
    case 'array':
      return fc.array(fromSchema((schema.items as Schema) ?? {}, doc, known), {
        maxLength: Math.min(Number(schema.maxItems ?? 3), 3),
      });
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      if (Object.keys(properties).length === 0) return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue());
      const model = Object.fromEntries(Object.entries(properties).map(([key, s]) => [key, fromSchema(s, doc, known)]));
      return fc.record(model, { requiredKeys: (schema.required as string[] | undefined) ?? [] });
    }
    default:
      return fc.jsonValue();
  }
}

/** Mostly a valid value, sometimes anything (a schemathesis "negative" case). */
function mostlyValid(valid: fc.Arbitrary<unknown>, invalid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 4, arbitrary: valid }, { weight: 1, arbitrary: invalid });
}

function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The requests of `operation`, generated from its schemas. */
function requestsOf(operation: Operation, doc: Schema, known: readonly string[]): fc.Arbitrary<GeneratedRequest> {
  const parts: Record<string, fc.Arbitrary<unknown>> = {};
  for (const p of operation.parameters) {
    const valid = fromSchema(p.schema, doc, known);
    const value = p.in === 'path' ? mostlyValid(valid, fc.string({ minLength: 1, maxLength: 30 })) : valid;
    parts[`${p.in}:${p.name}`] = p.required || p.in === 'path' ? value : fc.option(value, { nil: undefined });
  }
  if (operation.body) parts.body = mostlyValid(fromSchema(operation.body, doc, known), fc.jsonValue());
  return fc.record(parts).map((values) => {
    let path = operation.path;
    const query = new URLSearchParams();
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(values)) {
      if (value === undefined || key === 'body') continue;
      const [where, name] = key.split(':') as [string, string];
      if (where === 'path') path = path.replace(`{${name}}`, encodeURIComponent(asText(value)));
      else if (where === 'query') query.set(name, asText(value));
      else headers[name.toLowerCase()] = asText(value);
    }
    const text = query.toString();
    return {
      operationId: operation.operationId,
      method: operation.method,
      url: `${path}${text ? `?${text}` : ''}`,
      headers,
      ...('body' in values ? { body: values.body } : {}),
    };
  });
}

/** The operations of OPERATIONS in the served document. */
function operationsOf(doc: Schema): Operation[] {
  const found: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Schema>>)) {
    for (const [method, op] of Object.entries(item)) {
      if (!OPERATIONS.has(op.operationId as string)) continue;
      const content = (op.requestBody as { content?: Record<string, { schema: Schema }> } | undefined)?.content;
      found.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId as string,
        parameters: ((op.parameters ?? []) as Parameter[]).filter((p) => p.in !== 'header' || p.schema.pattern),
        ...(content?.['application/json'] ? { body: content['application/json'].schema } : {}),
      });
    }
  }
  return found;
}

const stack = useRunsStack(async () => {
  const started = await startRunsStack();
  // A tool with a limit (docs/limits.md), so generated calls reach the limiter too.
  const files = runsRepoFiles({ origin: started.upstream.origin });
  const weather = files.find((f) => f.path.endsWith('current-weather.mtr'));
  if (weather) weather.content = `${weather.content}limit = { calls = 5 per = "1m" onLimit = "fail" }\n`;
  await started.api.deploy(files);
  return started;
});

describe('a schemathesis-style fuzz of the routes of issue #46', () => {
  it('answers every generated request below 500, each error with its code', async () => {
    const served = await stack.api.request('GET', '/openapi.json');
    expect(served.status).toBe(200);
    const doc = served.body as Schema;
    const operations = operationsOf(doc);
    expect(operations.map((o) => o.operationId).sort()).toEqual([...OPERATIONS].sort());

    // Known values: a run waiting for its budget, another ended, the deployed names, the namespace.
    const waiting = await stack.api.startRun(
      'weather',
      { place: 'Oslo' },
      { budget: { tokens: 1, onExceeded: 'wait' } },
    );
    expect(waiting.status, JSON.stringify(waiting.body)).toBe(201);
    await stack.api.waitForRun(waiting.body.id, (r) => r.status !== 'Running');
    const known = [
      waiting.body.id as string,
      'default',
      'weather',
      'current-weather',
      'weather-assistant',
      'open-meteo-forecast',
      'support-desk',
      'no-such-thing',
    ];

    const seen = new Map<string, number>();
    const statuses = new Map<number, number>();
    const arbitrary = fc.oneof(...operations.map((o) => requestsOf(o, doc, known)));
    await fc.assert(
      fc.asyncProperty(arbitrary, async (request) => {
        const res = await fetch(`${stack.servers[0].url}${request.url}`, {
          method: request.method,
          headers: {
            authorization: `Bearer ${stack.adminKey}`,
            ...request.headers,
            ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body: request.body === undefined ? undefined : JSON.stringify(request.body),
          signal: AbortSignal.timeout(15_000),
        });
        const text = await res.text();
        seen.set(request.operationId, (seen.get(request.operationId) ?? 0) + 1);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const what = `${request.method} ${request.url} ${JSON.stringify(request.body)} answered ${res.status}: ${text}`;
        expect(res.status, what).toBeLessThan(500);
        if (res.status >= 400) expect(JSON.parse(text).code, what).toMatch(/^api:[a-z-]+:[a-z-]+$/);
      }),
      { numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS, markInterruptAsFailure: false, endOnFailure: true },
    );
    // Every operation was asked, and the answers were not all refusals of the same kind.
    for (const id of OPERATIONS) expect(seen.get(id) ?? 0, `${id} was never asked`).toBeGreaterThan(0);
    expect([...statuses.keys()].some((s) => s < 300)).toBe(true);
    expect(statuses.size).toBeGreaterThan(3);
  }, 90_000);

  it('refuses a version past PostgreSQL’s integer with 400, as the fuzz first found it answering 500', async () => {
    const answer = await stack.api.request('POST', '/v1/extops/current-weather/call', {
      arguments: {},
      version: 8225866453007483,
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(400);
    expect(answer.body.code).toBe('api:request:invalid');
  });
});
