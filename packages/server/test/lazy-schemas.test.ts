import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { lazySerializerBuilder, lazyValidator, type Validate } from '../src/http/lazy-schemas.js';

// What `mt serve` no longer spends at start: a route's schemas are compiled when first used, not when it is added.
describe('schemas compiled on first use', () => {
  it('a response serializer compiles on its first response, and writes what fastify’s own one writes', async () => {
    const app = Fastify({ schemaController: { compilersFactory: { buildSerializer: lazySerializerBuilder() } } });
    // fast-json-stringify refuses this schema when it compiles it: at start before, at the first 500 now.
    app.get('/broken', { schema: { response: { 200: { type: 'object' }, 500: { type: 'no-such-type' } } } }, () => ({
      a: 1,
    }));
    app.get(
      '/pick',
      { schema: { response: { 200: { type: 'object', properties: { a: { type: 'integer' } } } } } },
      () => ({ a: 1, secret: 'not in the schema' }),
    );
    await app.ready();
    const picked = await app.inject('/pick');
    expect(picked.body).toBe('{"a":1}');
    expect((await app.inject('/broken')).statusCode).toBe(200);
    await app.close();
    // The same routes with fastify's default builder: the broken schema stops the start.
    const eager = Fastify();
    eager.get('/broken', { schema: { response: { 500: { type: 'no-such-type' } } } }, () => ({}));
    await expect(eager.ready()).rejects.toThrow();
  });

  it('a validator compiles once, on its first call, and passes on the errors of the compiled one', () => {
    let compiled = 0;
    const validator = lazyValidator(() => {
      compiled++;
      const check: Validate = (data: unknown) => {
        check.errors = data === 1 ? null : [{ message: 'must be 1' } as never];
        return data === 1;
      };
      return check;
    });
    expect(compiled).toBe(0);
    expect(validator(2)).toBe(false);
    expect(validator.errors).toEqual([{ message: 'must be 1' }]);
    expect(validator(1)).toBe(true);
    expect(validator.errors).toBeNull();
    expect(compiled).toBe(1);
  });
});
