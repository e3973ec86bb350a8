import type { Json, Resource, Tool, ToolDefinition } from '@maitento/lang';
import { canonicalJson, differsOnlyInKeyOrder, type Pin } from '../resources/hash.js';
import { type ChangeSummary, diffToolDefinitions } from './tool-diff.js';

function isObject(value: unknown): value is { [key: string]: Json } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// Top-level fields that differ, one level deeper for grouping objects (`parameters.query`, `schema.request`).
function fieldChanges(before: Record<string, unknown>, after: Record<string, unknown>, skip: Set<string>): string[] {
  const out: string[] = [];
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  for (const key of keys) {
    if (skip.has(key) || canonicalJson(before[key]) === canonicalJson(after[key])) continue;
    const a = before[key];
    const b = after[key];
    if (isObject(a) && isObject(b)) {
      for (const sub of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
        if (canonicalJson(a[sub]) !== canonicalJson(b[sub])) out.push(`${key}.${sub}`);
      }
    } else {
      out.push(key);
    }
  }
  return out;
}

function pinChanges(before: Pin[], after: Pin[]): string[] {
  const was = new Map(before.map((pin) => [`${pin.kind}:${pin.name}`, pin.version]));
  const out: string[] = [];
  for (const pin of after) {
    const old = was.get(`${pin.kind}:${pin.name}`);
    if (old === undefined) out.push(`${pin.kind} ${pin.name}: now version ${pin.version}`);
    else if (old !== pin.version) out.push(`${pin.kind} ${pin.name}: version ${old} → ${pin.version}`);
  }
  const now = new Set(after.map((pin) => `${pin.kind}:${pin.name}`));
  for (const pin of before)
    if (!now.has(`${pin.kind}:${pin.name}`)) out.push(`${pin.kind} ${pin.name}: no longer used`);
  return out;
}

/** The previous version of a resource, as a deploy compares against it. */
export interface PreviousVersion {
  resource: Resource;
  pins: Pin[];
  definition: ToolDefinition | null;
}

/**
 * Describes what changed from `previous` to the new version in words: fields, pinned versions and,
 * for a tool, what changed for the model (from the definitions) and whether approval was turned off.
 */
export function describeChange(
  previous: PreviousVersion,
  next: { resource: Resource; pins: Pin[]; definition?: ToolDefinition },
): ChangeSummary {
  const changed: string[] = [];
  const breaking: string[] = [];
  const skip = new Set(['kind', 'name']);
  if (next.resource.kind === 'tool') {
    skip.add('guidance');
    skip.add('requiresApproval');
    const before = previous.resource as Tool;
    if (previous.definition && next.definition) {
      const model = diffToolDefinitions(previous.definition, next.definition);
      changed.push(...model.changed);
      breaking.push(...model.breaking);
    } else if (before.guidance !== next.resource.guidance) {
      changed.push('guidance changed');
    }
    if (before.requiresApproval && !next.resource.requiresApproval) changed.push('approval turned off');
    if (!before.requiresApproval && next.resource.requiresApproval) changed.push('approval turned on');
  }
  changed.push(
    ...fieldChanges(
      previous.resource as unknown as Record<string, unknown>,
      next.resource as unknown as Record<string, unknown>,
      skip,
    ),
  );
  if (next.resource.kind === 'connector' && previous.resource.kind === 'connector') {
    // The order of a schema's properties is what a model reads, so a reorder alone is a version (contentHash).
    for (const part of ['request', 'response'] as const) {
      if (differsOnlyInKeyOrder(previous.resource.schema[part], next.resource.schema[part])) {
        changed.push(`schema.${part}: key order`);
      }
    }
  }
  changed.push(...pinChanges(previous.pins, next.pins));
  return { changed, breaking };
}
