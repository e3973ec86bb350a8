import { didYouMean, type FunctionBinding, type Json, type JsonSchema } from '@maitento/lang';
import { isUuid } from '@maitento/store';
import { engineErrors } from '../errors.js';
import type { PinnedSet } from './pinned.js';

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

function shown(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

// The JSON types a binding target accepts: a parameter's type, or the body field's schema `type`.
function targetTypes(binding: FunctionBinding, pinned: PinnedSet): string[] | undefined {
  const tool = pinned.tools.get(binding.function);
  const connector = tool && pinned.connectors.get(tool.resource.connector);
  if (!connector) return undefined;
  if (binding.type !== 'request') {
    const param = connector.resource.parameters[binding.type].find((p) => p.name === binding.target);
    return param ? [param.type] : undefined;
  }
  let schema: JsonSchema | undefined = connector.resource.schema.request;
  for (const part of binding.target.split('/')) {
    if (typeof schema !== 'object' || schema === null) return undefined;
    const props = schema.properties;
    if (typeof props !== 'object' || props === null || Array.isArray(props)) return undefined;
    schema = (props as Record<string, JsonSchema>)[part];
  }
  if (typeof schema !== 'object' || schema === null) return undefined;
  const type = schema.type;
  if (typeof type === 'string') return [type];
  if (Array.isArray(type)) return type.filter((t): t is string => typeof t === 'string');
  return undefined;
}

// A value of one of `types`, converting the text a CLI sends ("42", "true") when that is what is meant.
function typed(value: unknown, types: string[]): { ok: true; value: Json } | { ok: false } {
  for (const type of types) {
    switch (type) {
      case 'string':
        if (typeof value === 'string') return { ok: true, value };
        break;
      case 'number':
      case 'integer': {
        const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
        if (typeof n === 'number' && Number.isFinite(n) && (type === 'number' || Number.isInteger(n))) {
          return { ok: true, value: n };
        }
        break;
      }
      case 'boolean':
        if (typeof value === 'boolean') return { ok: true, value };
        if (value === 'true' || value === 'false') return { ok: true, value: value === 'true' };
        break;
      case 'object':
        if (typeof value === 'object' && value !== null && !Array.isArray(value))
          return { ok: true, value: value as Json };
        break;
      case 'array':
        if (Array.isArray(value)) return { ok: true, value: value as Json };
        break;
      case 'null':
        if (value === null) return { ok: true, value: null };
        break;
    }
  }
  return { ok: false };
}

/**
 * Checks a run's inputs against its interaction: unknown names, missing required ones, secret inputs that
 * are not GUIDs, binding values of the wrong type. Resolves with the inputs to store (typed values converted).
 */
export function checkInputs(pinned: PinnedSet, given: Record<string, unknown>): Record<string, unknown> {
  const interaction = pinned.interaction.resource;
  const { prompts } = interaction.inputs;
  const { binding, auth } = interaction.inputs.functions;
  const known = new Set([...prompts, ...binding, ...auth].map((input) => input.name));
  for (const name of Object.keys(given)) {
    if (known.has(name)) continue;
    const guess = didYouMean(name, known);
    throw engineErrors.create('api:interactions:input-unknown', {
      interaction: interaction.name,
      name,
      suggestion: guess === undefined ? '' : `; did you mean ${guess}?`,
      known: known.size === 0 ? '(none)' : [...known].join(', '),
    });
  }
  const out: Record<string, unknown> = {};
  for (const prompt of prompts) {
    const value = given[prompt.name];
    if (isEmpty(value)) {
      if (prompt.required && prompt.default === undefined) {
        throw engineErrors.create('api:interactions:input-required', { name: prompt.name, what: 'a prompt input' });
      }
      continue;
    }
    if (typeof value === 'object') {
      throw engineErrors.create('api:interactions:input-invalid', {
        detail: `requires text for prompt input ${prompt.name} - but value is: ${shown(value)}`,
      });
    }
    out[prompt.name] = String(value);
  }
  for (const b of binding) {
    const value = given[b.name];
    if (isEmpty(value)) {
      if (b.required && b.default === undefined) {
        throw engineErrors.create('api:interactions:input-required', {
          name: b.name,
          what: `the value of ${b.type === 'request' ? 'body field' : `${b.type} parameter`} ${b.target} of ${b.function}`,
        });
      }
      continue;
    }
    const types = targetTypes(b, pinned);
    if (types === undefined || types.length === 0) {
      out[b.name] = value;
      continue;
    }
    const checked = typed(value, types);
    if (!checked.ok) {
      throw engineErrors.create('api:interactions:input-invalid', {
        detail: `requires a value of type ${types.join(' or ')} for ${b.name} (${b.target} of ${b.function}) - but value is: ${shown(value)}`,
      });
    }
    out[b.name] = checked.value;
  }
  for (const a of auth) {
    const value = given[a.name];
    if (isEmpty(value)) {
      if (a.required && a.secret === undefined) {
        throw engineErrors.create('api:interactions:input-required', {
          name: a.name,
          what: `the id of the secret ${a.function} sends in ${a.header}`,
        });
      }
      continue;
    }
    if (typeof value !== 'string' || !isUuid(value)) {
      throw engineErrors.create('api:interactions:input-invalid', {
        // A secret's name is the usual mistake: say where the ids are.
        detail: `requires valid GUID for secret ID ${a.name} - but value is: ${shown(value)}; pass the secret's id, not its name (\`mt secret-list\` shows them)`,
      });
    }
    out[a.name] = value.toLowerCase();
  }
  return out;
}

/**
 * The task with every `%%name%%` filled: prompt inputs (their defaults when not given) and binding inputs
 * (the run's value or the binding's default; JSON for a non-text value). An auth input's placeholder is
 * left empty: the model never learns which secret a run uses.
 */
export function fillTask(pinned: PinnedSet, inputs: Record<string, unknown>): string {
  const interaction = pinned.interaction.resource;
  const text = (value: unknown) =>
    value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  const values = new Map<string, string>();
  for (const a of interaction.inputs.functions.auth) values.set(a.name, '');
  for (const b of interaction.inputs.functions.binding) values.set(b.name, text(inputs[b.name] ?? b.default));
  for (const p of interaction.inputs.prompts) values.set(p.name, text(inputs[p.name] ?? p.default));
  return interaction.task.replace(/%%([A-Za-z0-9_.-]+)%%/g, (match, name: string) => values.get(name) ?? match);
}
