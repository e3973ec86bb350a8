import type { Json } from '@maitento/lang';
import type { ToolPlan } from '../internal/plan.js';
import type { RunBindingValue } from '../gateway/types.js';
import type { ModelArguments } from './arguments.js';

/** The call's values after every binding was applied. */
export interface MergedValues {
  /** The body, or undefined when the connector has no `schema.request` (then no body is sent). */
  body: { [key: string]: Json } | undefined;
  path: Map<string, Json>;
  query: Map<string, Json>;
  header: Map<string, Json>;
}

/** Sets `value` at `segments` inside `target`, copying every object on the way so no caller's object changes. */
function setNested(target: { [key: string]: Json }, segments: readonly string[], value: Json): void {
  let node = target;
  for (let i = 0; i < segments.length - 1; i++) {
    const existing = node[segments[i]];
    const copy: { [key: string]: Json } =
      typeof existing === 'object' && existing !== null && !Array.isArray(existing) ? { ...existing } : {};
    node[segments[i]] = copy;
    node = copy;
  }
  node[segments[segments.length - 1]] = value;
}

function isEmpty(value: Json | undefined): boolean {
  return value === undefined || value === null || value === '';
}

/** Step 2: fixed bindings first, then run-input bindings (a missing or empty input falls back to its default). */
export function mergeBindings(
  plan: ToolPlan,
  args: ModelArguments,
  runBindings: readonly RunBindingValue[] | undefined,
): MergedValues {
  const hasBody = plan.connector.connector.schema.request !== undefined;
  const body = hasBody ? { ...(args.request ?? {}) } : undefined;
  const path = args.path;
  const query = args.query;
  if (body !== undefined) for (const [segments, value] of plan.fixedRequest) setNested(body, segments, value);
  for (const [name, value] of plan.fixedQuery) query.set(name, value);
  for (const [name, value] of plan.fixedPath) path.set(name, value);
  if (runBindings !== undefined) {
    for (const { binding, value } of runBindings) {
      const chosen = isEmpty(value) ? binding.default : value;
      if (chosen === undefined) continue;
      if (binding.type === 'request') {
        if (body !== undefined) setNested(body, binding.target.split('/'), chosen);
      } else if (binding.type === 'query') query.set(binding.target, chosen);
      else path.set(binding.target, chosen);
    }
  }
  return { body, path, query, header: args.header };
}
