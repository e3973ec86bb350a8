import { createHash } from 'node:crypto';

/** A value whose object keys are written in their own order, not sorted (see {@link contentHash}). */
class KeepOrder {
  constructor(readonly value: unknown) {}
}

function serialize(value: unknown, sortKeys: boolean): string {
  if (value instanceof KeepOrder) return serialize(value.value, false);
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value))
    return `[${value.map((item) => (item === undefined ? 'null' : serialize(item, sortKeys))).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, member]) => member !== undefined);
  if (sortKeys) entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, member]) => `${JSON.stringify(key)}:${serialize(member, sortKeys)}`).join(',')}}`;
}

/** JSON with object keys sorted at every depth and `undefined` members left out: one text per meaning. */
export function canonicalJson(value: unknown): string {
  return serialize(value, true);
}

/** Whether two values differ only in the order of their object keys. */
export function differsOnlyInKeyOrder(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b) && serialize(a, false) !== serialize(b, false);
}

/** A reference of one version to another, fixed at deploy. */
export interface Pin {
  kind: 'auth-provider' | 'connector' | 'tool' | 'agent' | 'interaction' | 'schedule' | 'trigger';
  name: string;
  version: number;
}

/**
 * The content hash of a version: sha256 of the canonical JSON of the compiled resource and the versions
 * it pins, so text that means the same (comments, layout, key order) hashes the same. One exception: a
 * connector's `schema` keeps its key order, because the order of `schema.request`'s properties is the order
 * the model reads them in; a schema whose keys are sorted already hashes as it always did.
 */
export function contentHash(resource: unknown, pins: Pin[]): string {
  let hashed = resource;
  if (typeof resource === 'object' && resource !== null && !Array.isArray(resource)) {
    const r = resource as { kind?: unknown; schema?: unknown };
    if (r.kind === 'connector' && r.schema !== undefined) hashed = { ...r, schema: new KeepOrder(r.schema) };
  }
  return createHash('sha256')
    .update(canonicalJson({ resource: hashed, pins }))
    .digest('hex');
}
