import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every depth and `undefined` members left out: one text per meaning. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value))
    return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, member]) => member !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`);
  return `{${entries.join(',')}}`;
}

/** A reference of one version to another, fixed at deploy. */
export interface Pin {
  kind: 'connector' | 'tool' | 'agent' | 'interaction';
  name: string;
  version: number;
}

/**
 * The content hash of a version: sha256 of the canonical JSON of the compiled resource and the versions
 * it pins, so text that means the same (comments, layout, key order) hashes the same.
 */
export function contentHash(resource: unknown, pins: Pin[]): string {
  return createHash('sha256').update(canonicalJson({ resource, pins })).digest('hex');
}
