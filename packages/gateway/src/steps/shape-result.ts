import type { Json } from '@maitento/lang';
import { gatewayErrors } from '../errors.js';
import type { ToolCallResult } from '../gateway/types.js';
import type { ToolPlan } from '../internal/plan.js';
import { describeErrors } from '../internal/validators.js';
import type { ReadBody } from './read-body.js';
import { type Redactor, redactCutEnd, redactJson } from './redact.js';

const JSON_TYPE = /[/+]json\b/i;

/** Response headers as one string each, secrets masked. */
export function flattenHeaders(
  headers: Record<string, string | string[] | undefined>,
  redact: Redactor,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    out[name] = redact(Array.isArray(value) ? value.join(', ') : value);
  }
  return out;
}

/** The body as JSON when the content-type says so and it parses, else as text; secrets masked first. */
export function decodeBody(read: ReadBody, contentType: string | undefined, redact: Redactor): Json | string {
  const text = redact(read.text);
  if (read.truncated !== undefined) return redactCutEnd(text, redact);
  if (contentType !== undefined && JSON_TYPE.test(contentType)) {
    try {
      // Masked again once parsed: JSON can spell the secret with escapes (\u0073, \/) that the text does not
      // show. Without a backslash every parsed string is a piece of the masked text, so the walk is skipped.
      const parsed = JSON.parse(text) as Json;
      return text.includes('\\') ? redactJson(parsed, redact) : parsed;
    } catch {
      return text;
    }
  }
  return text;
}

/** Step 10: a 2xx body is the result (checked against `schema.response`); any other status is an error result. */
export function shapeResult(
  plan: ToolPlan,
  status: number,
  headers: Record<string, string>,
  read: ReadBody,
  redact: Redactor,
): ToolCallResult {
  const body = decodeBody(read, headers['content-type'], redact);
  const result: ToolCallResult = { ok: status >= 200 && status < 300, status, headers, body };
  if (read.truncated !== undefined) result.truncated = read.truncated;
  if (!result.ok) {
    const error = gatewayErrors.create('api:gateway:upstream-status', { tool: plan.tool.name, status });
    result.error = error.message;
    result.code = error.code;
    return result;
  }
  // A cut body cannot match its schema; the model is told it was cut instead.
  const validate = plan.connector.responseValidator;
  if (validate !== undefined && read.truncated === undefined && !validate(body)) {
    const error = gatewayErrors.create('api:gateway:response-invalid', {
      tool: plan.tool.name,
      problems: describeErrors(validate.errors, 'response').join('; '),
    });
    result.ok = false;
    result.error = redact(error.message);
    result.code = error.code;
  }
  return result;
}

/** The text a model reads for a result: the body, or the error; a cut body says so and how large it was. */
export function toolResultText(result: ToolCallResult): string {
  let text: string;
  if (result.ok) text = typeof result.body === 'string' ? result.body : JSON.stringify(result.body ?? null);
  else {
    const parts: Record<string, Json> = { error: result.error ?? 'The call failed.', code: result.code ?? null };
    if (result.status !== undefined) parts.status = result.status;
    if (result.body !== undefined && result.body !== '') parts.body = result.body;
    text = JSON.stringify(parts);
  }
  if (result.truncated !== undefined) {
    const size = result.truncated.size === undefined ? 'an unknown size' : `${result.truncated.size} bytes`;
    text = `[The response was cut at ${result.truncated.limit} bytes; the whole response was ${size}.]\n${text}`;
  }
  return text;
}
