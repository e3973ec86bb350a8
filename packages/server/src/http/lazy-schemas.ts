import { createRequire } from 'node:module';
import type { FastifySchemaCompiler, FastifyServerOptions } from 'fastify';
import { serverRequire } from '../server/package-require.js';

type SerializerBuilder = NonNullable<
  NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']
>;
type Serialize = (data: unknown) => string;

/** A schema compiled at start to set the compilers up (see the callers). */
export const WARM_UP_SCHEMA = { type: 'object', properties: { warm: { type: 'string' } } } as const;

// fastify's own serializer builder (fast-json-stringify), loaded from where fastify loads it: it is fastify's
// dependency, so this adds none and stays the version fastify was released with.
const fastifyRequire = createRequire(serverRequire.resolve('fastify'));

/**
 * fastify's default response serializer builder, compiling each route's response schema on the route's first
 * response of that status instead of at start: fastify compiles every one of them (about 400 schemas, half a
 * second of CPU, a fifth of `mt serve`'s start) while a process answers with few of them, and a test server with
 * fewer still. The code it compiles is the same; the first response of a status pays its few milliseconds.
 */
export function lazySerializerBuilder(): SerializerBuilder {
  const build = (
    fastifyRequire('@fastify/fast-json-stringify-compiler') as { SerializerSelector: () => SerializerBuilder }
  ).SerializerSelector();
  let warm = false;
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options);
    // One small schema now: the first compile of a process pays fast-json-stringify's own set-up (and the JIT's),
    // which belongs to the start, not to the first request (a slow-request log line at info otherwise).
    if (!warm) {
      warm = true;
      compile({ schema: WARM_UP_SCHEMA, method: 'GET', url: '/', httpStatus: '200' })({ warm: '' });
    }
    return (route) => {
      let serialize: Serialize | undefined;
      return (data) => {
        serialize ??= compile(route);
        return serialize(data);
      };
    };
  };
}

/** A validator as fastify calls it: true or false, with the reasons of a false in `errors`. */
export type Validate = ReturnType<FastifySchemaCompiler<unknown>>;

/**
 * `compile(schema)` on the first validation instead of now (the same half-second reasoning as
 * {@link lazySerializerBuilder}, for Ajv): the validator it returns copies the compiled one's `errors` after each call.
 */
export function lazyValidator(compile: () => Validate): Validate {
  let validate: Validate | undefined;
  const checked: Validate = (data: unknown) => {
    validate ??= compile();
    const ok = validate(data);
    checked.errors = validate.errors;
    return ok;
  };
  checked.errors = undefined;
  return checked;
}
