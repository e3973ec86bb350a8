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

  it('validates a 2020-12 schema by 2020-12 rules ($schema chooses) and a draft-07 one by draft-07 rules', () => {
    const cache = new ValidatorCache(10);
    // prefixItems is a 2020-12 keyword: under draft-07 it is an unknown keyword and checks nothing.
    const tuple = { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }] };
    const modern = cache.get({ $schema: 'https://json-schema.org/draft/2020-12/schema', ...tuple });
    expect(modern(['a', 1])).toBe(true);
    expect(modern(['a', 'b'])).toBe(false);
    const classic = cache.get({ $schema: 'http://json-schema.org/draft-07/schema#', ...tuple });
    expect(classic(['a', 'b'])).toBe(true);
    // Without $schema: draft-07, where items may be an array of schemas (a tuple).
    const untagged = cache.get({ type: 'array', items: [{ type: 'string' }] });
    expect(untagged([1])).toBe(false);
    // $defs and a $ref into them, as OpenAPI 3.1 documents write them.
    const withDefs = cache.get({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $defs: { id: { type: 'integer', minimum: 1 } },
      type: 'object',
      properties: { id: { $ref: '#/$defs/id' } },
    });
    expect(withDefs({ id: 2 })).toBe(true);
    expect(withDefs({ id: 0 })).toBe(false);
  });

  it('refuses a $schema of another dialect, and a 2020-12 schema its meta-schema refuses', () => {
    const cache = new ValidatorCache(10);
    expect(() => cache.get({ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' })).toThrow(
      /draft-04.* is not supported: draft-07 or 2020-12/,
    );
    expect(() =>
      cache.get({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', prefixItems: {} }),
    ).toThrow(/prefixItems must be array/);
    expect(cache.size).toBe(0);
  });
});
