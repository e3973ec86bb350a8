import type { Json } from '@maitento/lang';
import { gatewayErrors } from '../errors.js';
import type { ToolPlan } from '../internal/plan.js';
import type { RunBindingValue } from '../gateway/types.js';
import { dropOptionalNulls } from './optional-nulls.js';

/** The model's arguments sorted by where they go, nothing merged yet. */
export interface ModelArguments {
  /** Body fields, or undefined when the model sent none. */
  request: { [key: string]: Json } | undefined;
  path: Map<string, Json>;
  query: Map<string, Json>;
  /** Header parameters: only the model fills them (no binding targets a header). */
  header: Map<string, Json>;
}

function isObject(value: unknown): value is { [key: string]: Json } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function boundByRun(runBindings: readonly RunBindingValue[] | undefined, type: string, target: string): boolean {
  if (runBindings === undefined) return false;
  for (const { binding } of runBindings) if (binding.type === type && binding.target === target) return true;
  return false;
}

/** Whether a body field (nested names joined by `/`) is filled by a fixed or run binding. */
function requestBound(plan: ToolPlan, runBindings: readonly RunBindingValue[] | undefined, target: string): boolean {
  return plan.fixedRequestTargets.has(target) || boundByRun(runBindings, 'request', target);
}

function checkNestedBound(
  plan: ToolPlan,
  runBindings: readonly RunBindingValue[] | undefined,
  value: Json,
  target: string,
): void {
  if (!isObject(value)) return;
  for (const key of Object.keys(value)) {
    const nested = `${target}/${key}`;
    if (requestBound(plan, runBindings, nested)) {
      throw gatewayErrors.create('api:gateway:argument-bound', {
        tool: plan.tool.name,
        argument: `request.${nested.replaceAll('/', '.')}`,
      });
    }
    checkNestedBound(plan, runBindings, value[key], nested);
  }
}

function hasNestedBindings(plan: ToolPlan, runBindings: readonly RunBindingValue[] | undefined): boolean {
  for (const target of plan.fixedRequestTargets) if (target.includes('/')) return true;
  if (runBindings !== undefined) {
    for (const { binding } of runBindings) if (binding.type === 'request' && binding.target.includes('/')) return true;
  }
  return false;
}

/** Step 1: reads the model's arguments, refusing unknown ones and any that name a bound field. */
export function readArguments(
  plan: ToolPlan,
  args: unknown,
  runBindings: readonly RunBindingValue[] | undefined,
): ModelArguments {
  const tool = plan.tool.name;
  const out: ModelArguments = { request: undefined, path: new Map(), query: new Map(), header: new Map() };
  if (args === undefined || args === null) return out;
  if (!isObject(args)) {
    throw gatewayErrors.create('api:gateway:arguments-invalid', { tool, reason: 'they are not a JSON object' });
  }
  // for-in, not Object.keys: no array per call; JSON objects have no enumerable inherited keys.
  for (const key in args) {
    if (key !== 'request' && key !== 'additionalInputs') {
      throw gatewayErrors.create('api:gateway:argument-unknown', { tool, argument: key });
    }
  }
  const { request, additionalInputs } = args;
  if (request !== undefined && request !== null) {
    if (!isObject(request)) {
      throw gatewayErrors.create('api:gateway:arguments-invalid', { tool, reason: '"request" is not an object' });
    }
    const fields = plan.connector.requestFields;
    const hasBody = plan.connector.connector.schema.request !== undefined;
    const nested = hasNestedBindings(plan, runBindings);
    for (const key in request) {
      if (requestBound(plan, runBindings, key)) {
        throw gatewayErrors.create('api:gateway:argument-bound', { tool, argument: `request.${key}` });
      }
      if (!hasBody || (fields !== undefined && !fields.has(key))) {
        throw gatewayErrors.create('api:gateway:argument-unknown', { tool, argument: `request.${key}` });
      }
      if (nested) checkNestedBound(plan, runBindings, request[key], key);
    }
    out.request = hasBody ? dropOptionalNulls(plan.connector.connector.schema.request, request) : request;
  }
  if (additionalInputs !== undefined && additionalInputs !== null) {
    if (!isObject(additionalInputs)) {
      throw gatewayErrors.create('api:gateway:arguments-invalid', {
        tool,
        reason: '"additionalInputs" is not an object',
      });
    }
    for (const key in additionalInputs) {
      const dot = key.indexOf('.');
      const kind = key.slice(0, dot);
      const name = key.slice(dot + 1);
      const declared =
        dot > 0 &&
        ((kind === 'path' && plan.connector.pathParams.has(name)) ||
          (kind === 'query' && plan.connector.queryByName.has(name)) ||
          (kind === 'header' && plan.connector.headerByName.has(name)));
      if (!declared) throw gatewayErrors.create('api:gateway:argument-unknown', { tool, argument: key });
      if (kind === 'header') {
        const value = additionalInputs[key];
        if (value !== null) out.header.set(name, value);
        continue;
      }
      const fixed = kind === 'path' ? plan.fixedPath.has(name) : plan.fixedQuery.has(name);
      if (fixed || boundByRun(runBindings, kind, name)) {
        throw gatewayErrors.create('api:gateway:argument-bound', { tool, argument: key });
      }
      const value = additionalInputs[key];
      if (value !== null) (kind === 'path' ? out.path : out.query).set(name, value);
    }
  }
  return out;
}
