import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { ValidatorCache } from './validators.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const schemaOf = (n: number) => ({ $id: 'https://schemas.example.com/x.json', type: 'integer', minimum: n });

describe('ValidatorCache', () => {
  it('keeps at most its limit, dropping the least recently used', () => {
    const cache = new ValidatorCache(2);
    const first = cache.get(schemaOf(1));
    cache.get(schemaOf(2));
    expect(cache.get(schemaOf(1))).toBe(first);
    cache.get(schemaOf(3));
    expect(cache.size).toBe(2);
    expect(cache.get(schemaOf(1))).toBe(first);
    expect(cache.get(schemaOf(2))).not.toBe(undefined);
  });

  it('compiles equal content once, and different content with the same $id separately', () => {
    const cache = new ValidatorCache(10);
    expect(cache.get(schemaOf(5))).toBe(cache.get(schemaOf(5)));
    expect(cache.get(schemaOf(5))(4)).toBe(false);
    expect(cache.get(schemaOf(1))(4)).toBe(true);
  });

  it('frees a dropped validator: nothing else (no shared Ajv instance) holds on to it', async () => {
    const cache = new ValidatorCache(1);
    let dropped: WeakRef<object> | undefined;
    (() => {
      dropped = new WeakRef(cache.get(schemaOf(100)));
    })();
    cache.get(schemaOf(101));
    for (let i = 0; i < 5 && dropped?.deref() !== undefined; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      gc();
    }
    expect(dropped?.deref()).toBeUndefined();
  });

  it('throws on a schema that is not a JSON Schema, keeping nothing', () => {
    const cache = new ValidatorCache(10);
    expect(() => cache.get({ type: 'no-such-type' })).toThrow();
    expect(cache.size).toBe(0);
  });
});
