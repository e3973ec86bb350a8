import type { ConnectorParameter, Json } from '@maitento/lang';
import { gatewayErrors } from '../errors.js';
import type { ToolPlan } from '../internal/plan.js';
import { describeErrors } from '../internal/validators.js';
import type { MergedValues } from './bindings.js';

/** Parameter values as the strings that go into the URL, query ones in declared order. */
export interface CheckedParameters {
  path: Map<string, string>;
  query: Array<readonly [string, string]>;
  /** Header parameters as sent, in declared order. */
  header: Array<readonly [string, string]>;
}

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const INTEGER = /^-?(?:0|[1-9]\d*)$/;
// A lone surrogate cannot be percent-encoded (encodeURIComponent throws), so it is refused as a wrong value.
const LONE_SURROGATE = /\p{Cs}/u;

/** The URL text of one parameter value, or a problem; numeric strings are accepted because run inputs are text. */
function parameterText(param: ConnectorParameter, value: Json): string | { problem: string } {
  switch (param.type) {
    case 'number':
      if (typeof value === 'number' && Number.isFinite(value)) return String(value);
      if (typeof value === 'string' && NUMBER.test(value)) return value;
      return { problem: 'must be a number' };
    case 'integer':
      if (typeof value === 'number' && Number.isInteger(value)) return String(value);
      if (typeof value === 'string' && INTEGER.test(value)) return value;
      return { problem: 'must be an integer' };
    case 'boolean':
      if (typeof value === 'boolean') return String(value);
      if (value === 'true' || value === 'false') return value;
      return { problem: 'must be true or false' };
    default:
      if (typeof value === 'string')
        return LONE_SURROGATE.test(value) ? { problem: 'is not valid Unicode text' } : value;
      if (typeof value === 'number' || typeof value === 'boolean') return String(value);
      return { problem: 'must be a string' };
  }
}

// A header value is one line of visible text: no line break or other control character can split the request.
const HEADER_UNSAFE = /[\u0000-\u0008\u000a-\u001f\u007f]/;

function checkParameter(
  kind: 'path' | 'query' | 'header',
  param: ConnectorParameter,
  value: Json | undefined,
  problems: string[],
): string | undefined {
  if (value === undefined || value === null) {
    if (param.required || kind === 'path') problems.push(`${kind}.${param.name} is required`);
    return undefined;
  }
  const text = parameterText(param, value);
  if (typeof text === 'string') {
    if (kind !== 'header' || !HEADER_UNSAFE.test(text)) return text;
    problems.push(`header.${param.name} must be one line without control characters`);
    return undefined;
  }
  problems.push(`${kind}.${param.name} ${text.problem}`);
  return undefined;
}

/** Step 3: checks the body against `schema.request` and every parameter against its type, before anything is sent. */
export function validateRequest(plan: ToolPlan, values: MergedValues): CheckedParameters {
  const problems: string[] = [];
  const connector = plan.connector;
  if (values.body !== undefined && connector.requestValidator !== undefined) {
    if (!connector.requestValidator(values.body)) {
      problems.push(...describeErrors(connector.requestValidator.errors, 'request'));
    }
  }
  const path = new Map<string, string>();
  for (const param of connector.pathParams.values()) {
    const text = checkParameter('path', param, values.path.get(param.name), problems);
    if (text !== undefined) path.set(param.name, text);
  }
  const query: Array<readonly [string, string]> = [];
  for (const param of connector.queryParams) {
    const text = checkParameter('query', param, values.query.get(param.name), problems);
    if (text !== undefined) query.push([param.name, text]);
  }
  const header: Array<readonly [string, string]> = [];
  for (const param of connector.headerParams) {
    const text = checkParameter('header', param, values.header.get(param.name), problems);
    if (text !== undefined) header.push([param.name.toLowerCase(), text]);
  }
  if (problems.length > 0) {
    throw gatewayErrors.create(
      'api:gateway:request-invalid',
      { tool: plan.tool.name, problems: problems.join('; ') },
      { details: problems },
    );
  }
  return { path, query, header };
}
