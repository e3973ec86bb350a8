import type { Json } from '@maitento/lang';
import { type ToolPlan, toolPlan } from '../internal/plan.js';
import { readArguments } from '../steps/arguments.js';
import { type ResolvedAuth, resolveAuth } from '../steps/auth.js';
import { type MergedValues, mergeBindings } from '../steps/bindings.js';
import { buildPathAndQuery, finalUrl } from '../steps/build-url.js';
import type { Authorizer } from '../steps/egress.js';
import { idempotencyKeyFor } from '../steps/idempotency.js';
import { createRedactor, type Redactor, redactJson } from '../steps/redact.js';
import { validateRequest } from '../steps/validate.js';
import type { ResolvedOptions } from './options.js';
import type { PreparedRequestView, ToolCallInput } from './types.js';

/** The headers every call sends. */
export const BASE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'user-agent': 'Maitento/0.1',
  accept: 'application/json, */*;q=0.5',
});

/** A call with every step but sending done. */
export interface Assembled {
  plan: ToolPlan;
  method: string;
  /** `scheme://host[:port]` of the configured URL. */
  origin: string;
  /** Path and query of the first request. */
  path: string;
  /** Headers without the credential (added per hop, only where it may go); may be shared and frozen: copy to change. */
  headers: Readonly<Record<string, string>>;
  body: string | undefined;
  bodyJson: Json | undefined;
  auth: ResolvedAuth | undefined;
  redact: Redactor;
}

/** Steps 1-7 and 11: arguments, bindings, validation, URL, auth, the address check, headers. Throws MtError. */
export async function assemble(
  input: ToolCallInput,
  options: ResolvedOptions,
  authorize: Authorizer,
  deadline: AbortSignal,
): Promise<Assembled> {
  const plan = toolPlan(input.tool, input.connector, options.platformOrigin);
  const args = readArguments(plan, input.arguments, input.runBindings);
  const values = mergeBindings(plan, args, input.runBindings);
  const params = validateRequest(plan, values);
  const template = plan.connector.template;
  const path = buildPathAndQuery(template, plan.tool.name, params.path, params.query);
  const auth = await resolveAuth(plan, input, options.platform, options.platformOrigin, deadline);
  // The platform's own API is exempt from the public-address rule; every other host is checked. The host of the
  // built URL is the configured one, so the configured URL is what is judged.
  if (auth?.platform !== true) await authorize(template.url, deadline, template.origin);
  return finish(input, plan, path, values, auth, params.header);
}

function finish(
  input: ToolCallInput,
  plan: ToolPlan,
  path: string,
  values: MergedValues,
  auth: ResolvedAuth | undefined,
  headerParams: ReadonlyArray<readonly [string, string]>,
): Assembled {
  const method = input.connector.method;
  const body = values.body === undefined ? undefined : JSON.stringify(values.body);
  const key = idempotencyKeyFor(method, input.idempotencyKey);
  // The shared frozen object when nothing is added (a GET without a key); undici only reads the headers it is given.
  let headers: Record<string, string> = BASE_HEADERS;
  if (body !== undefined || key !== undefined || headerParams.length > 0) {
    headers = { ...BASE_HEADERS };
    // The header parameters first, so that nothing the gateway sends itself can be replaced by the model; the
    // credential's header is never one of them (the compiler refuses it; a call does not send it twice).
    const credential = auth?.header.toLowerCase();
    for (const [name, value] of headerParams)
      if (name !== credential && !Object.hasOwn(BASE_HEADERS, name)) headers[name] = value;
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (key !== undefined) headers['idempotency-key'] = key;
  }
  return {
    plan,
    method,
    origin: plan.connector.template.origin,
    path,
    headers,
    body,
    bodyJson: values.body,
    auth,
    redact: createRedactor(auth?.secrets ?? []),
  };
}

/** The request as a person may see it: the credential header present, secret values masked. */
export function viewOf(assembled: Assembled): PreparedRequestView {
  const { redact } = assembled;
  const headers: Record<string, string> = { ...assembled.headers };
  if (assembled.auth !== undefined) headers[assembled.auth.header] = redact(assembled.auth.value);
  const url = finalUrl(assembled.plan.connector.template, assembled.path, assembled.plan.tool.name);
  const view: PreparedRequestView = { method: assembled.method, url: redact(url.href), headers };
  if (assembled.bodyJson !== undefined) view.body = redactJson(assembled.bodyJson, redact);
  return view;
}
