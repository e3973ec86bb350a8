import type { Json, ToolDefinition } from '@maitento/lang';
import { canonicalJson } from '../resources/hash.js';

/** What changed between two versions, in words, and which of those changes can break a working agent. */
export interface ChangeSummary {
  changed: string[];
  breaking: string[];
}

type Schema = { [key: string]: Json };

function isObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// The fields the model fills, by the name users know: `request.amount`, `path.orderId`, `query.limit`.
function modelFields(definition: ToolDefinition): Map<string, Schema> {
  const fields = new Map<string, Schema>();
  const walk = (prefix: string, schema: Json) => {
    if (!isObject(schema)) return;
    if (isObject(schema.properties) && Object.keys(schema.properties).length > 0) {
      for (const [key, child] of Object.entries(schema.properties)) walk(`${prefix}.${key}`, child);
    } else {
      fields.set(prefix, schema);
    }
  };
  const top = isObject(definition.parameters.properties) ? definition.parameters.properties : {};
  for (const [part, schema] of Object.entries(top)) {
    if (part === 'additionalInputs' && isObject(schema) && isObject(schema.properties)) {
      for (const [key, child] of Object.entries(schema.properties)) if (isObject(child)) fields.set(key, child);
    } else {
      walk(part, schema);
    }
  }
  return fields;
}

// The JSON types a schema accepts; undefined means any value.
function acceptedTypes(schema: Schema): Set<string> | undefined {
  const types = new Set<string>();
  const add = (type: Json | undefined) => {
    if (typeof type === 'string') types.add(type);
    else if (Array.isArray(type)) for (const t of type) if (typeof t === 'string') types.add(t);
  };
  add(schema.type);
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches)) for (const branch of branches) if (isObject(branch)) add(branch.type);
  }
  if (Array.isArray(schema.enum) && schema.enum.includes(null)) types.add('null');
  return types.size === 0 ? undefined : types;
}

function acceptsNull(schema: Schema): boolean {
  const types = acceptedTypes(schema);
  return types === undefined || types.has('null');
}

function typeKey(schema: Schema): string {
  const types = acceptedTypes(schema);
  return types === undefined ? '*' : [...types].sort().join('|');
}

function narrowed(before: Schema, after: Schema): boolean {
  const was = acceptedTypes(before);
  const now = acceptedTypes(after);
  if (now !== undefined) {
    if (was === undefined) return true;
    for (const type of was) if (!now.has(type) && !(type === 'integer' && now.has('number'))) return true;
  }
  if (Array.isArray(after.enum)) {
    if (!Array.isArray(before.enum)) return true;
    const allowed = new Set(after.enum.map((value) => canonicalJson(value)));
    if (before.enum.some((value) => !allowed.has(canonicalJson(value)))) return true;
  }
  return false;
}

/**
 * Compares two model-facing tool definitions: parameters added, removed, renamed (a removal and an
 * addition of the same type), types narrowed or changed, guidance changed. Removed and renamed
 * parameters, new parameters that do not accept null, and narrowed types are breaking.
 */
export function diffToolDefinitions(before: ToolDefinition, after: ToolDefinition): ChangeSummary {
  const changed: string[] = [];
  const breaking: string[] = [];
  const note = (text: string, isBreaking: boolean) => {
    changed.push(text);
    if (isBreaking) breaking.push(text);
  };
  if (before.description !== after.description) note('guidance changed', false);
  const was = modelFields(before);
  const now = modelFields(after);
  const removed = [...was.keys()].filter((name) => !now.has(name));
  const added = [...now.keys()].filter((name) => !was.has(name));
  for (const name of [...removed]) {
    const partner = added.find((candidate) => typeKey(now.get(candidate)!) === typeKey(was.get(name)!));
    if (partner === undefined) continue;
    removed.splice(removed.indexOf(name), 1);
    added.splice(added.indexOf(partner), 1);
    note(`parameter renamed: ${name} → ${partner}`, true);
  }
  for (const name of removed) note(`parameter removed: ${name}`, true);
  for (const name of added) note(`parameter added: ${name}`, !acceptsNull(now.get(name)!));
  for (const [name, schema] of now) {
    const old = was.get(name);
    if (old === undefined || canonicalJson(old) === canonicalJson(schema)) continue;
    if (narrowed(old, schema)) note(`parameter type narrowed: ${name}`, true);
    else if (typeKey(old) !== typeKey(schema)) note(`parameter type widened: ${name}`, false);
    else note(`parameter changed: ${name}`, false);
  }
  return { changed, breaking };
}
