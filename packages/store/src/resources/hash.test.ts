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
