import { wireSchemas } from '@maitento/sdk';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyTypeProvider,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { Static, TSchema } from 'typebox';

/** Adds every wire schema of @maitento/sdk (each declared once there, with its `$id`) to `app`. */
export function addSharedSchemas(app: FastifyInstance): void {
  for (const schema of wireSchemas) app.addSchema(schema);
}

export { MAX_NAME_LENGTH } from '@maitento/sdk';

/**
 * fastify's type provider for TypeBox schemas (its documented `withTypeProvider`): a route's `request.params`,
 * `request.query` and `request.body` are the `Static` types of the schemas its `schema` declares, so a handler's
 * types come from the same declaration fastify validates with. A schema that is not TypeBox's (a `$ref`) is unknown.
 */
export interface WireTypes extends FastifyTypeProvider {
  validator: this['schema'] extends TSchema ? Static<this['schema']> : unknown;
  serializer: unknown;
}

/** The fastify instance the REST routes are added to: {@link WireTypes} types their requests. */
export type Api = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  WireTypes
>;
