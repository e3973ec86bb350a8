import type { FastifyInstance } from 'fastify';
import { type OperationId, requestSchemas, wireSchemas } from '@maitento/sdk';

/** Adds every wire schema of @maitento/sdk (each declared once there, with its `$id`) to `app`. */
export function addSharedSchemas(app: FastifyInstance): void {
  for (const schema of wireSchemas) app.addSchema(schema);
}

/** A response map: `ok` for the success status, the shared error schema for every 4xx and 5xx. */
export function responses(ok: Record<number, unknown>): Record<string, unknown> {
  return { ...ok, '4xx': { $ref: 'Error#' }, '5xx': { $ref: 'Error#' } };
}

export { MAX_NAME_LENGTH } from '@maitento/sdk';

/**
 * The start of a route's schema: its operationId and the request schemas @maitento/sdk declares for it
 * (`requestSchemas`: path parameters, query, body), so the route validates with the SDK's declarations.
 */
export function operation<Op extends OperationId>(operationId: Op): { operationId: Op } & (typeof requestSchemas)[Op] {
  const schemas = requestSchemas[operationId];
  if (!schemas) throw new Error(`@maitento/sdk declares no operation ${operationId}`);
  return { operationId, ...schemas };
}
