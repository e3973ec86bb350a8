import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, contentHash } from './hash.js';

describe('content hash', () => {
  it('is the same for objects that differ only in key order or undefined members', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: undefined } })).toBe(
      '{"a":{"d":[1,{"x":1,"y":2}]},"b":1}',
    );
    expect(contentHash({ a: 1, b: 2 }, [])).toBe(contentHash({ b: 2, a: 1 }, []));
  });

  it('changes when a pinned version changes', () => {
    const pin = (version: number) => [{ kind: 'connector' as const, name: 'c', version }];
    expect(contentHash({ a: 1 }, pin(1))).not.toBe(contentHash({ a: 1 }, pin(2)));
  });
});

describe('content hash of a connector schema', () => {
  const connector = (properties: Record<string, unknown>) => ({
    kind: 'connector',
    name: 'c',
    schema: { request: { properties, type: 'object' } },
  });

  it("changes when only the order of schema.request's properties changes, since the model reads that order", () => {
    const a = connector({ quantity: { type: 'integer' }, sku: { type: 'string' } });
    const b = connector({ sku: { type: 'string' }, quantity: { type: 'integer' } });
    expect(contentHash(a, [])).not.toBe(contentHash(b, []));
  });

  it('is unchanged for a schema whose keys are sorted already, and for the order of other fields', () => {
    const sorted = connector({ quantity: { type: 'integer' }, sku: { type: 'string' } });
    expect(contentHash(sorted, [])).toBe(
      createHash('sha256')
        .update(canonicalJson({ resource: sorted, pins: [] }))
        .digest('hex'),
    );
    const { kind, name, schema } = sorted;
    expect(contentHash({ schema, name, kind }, [])).toBe(contentHash(sorted, []));
  });
});
