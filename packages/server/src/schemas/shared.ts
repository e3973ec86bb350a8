import type { FastifyInstance } from 'fastify';
import { wireSchemas } from '@maitento/sdk';

/** Adds every wire schema of @maitento/sdk (each declared once there, with its `$id`) to `app`. */
export function addSharedSchemas(app: FastifyInstance): void {
  for (const schema of wireSchemas) app.addSchema(schema);
}

/** A response map: `ok` for the success status, the shared error schema for every 4xx and 5xx. */
export function responses(ok: Record<number, unknown>): Record<string, unknown> {
  return { ...ok, '4xx': { $ref: 'Error#' }, '5xx': { $ref: 'Error#' } };
}

/** The longest resource name a path may carry (a deployed file path is at most 1000 characters). */
export const MAX_NAME_LENGTH = 1000;

// A name is a file name: no control characters (PostgreSQL text cannot even hold NUL).
const name = { type: 'string', minLength: 1, maxLength: MAX_NAME_LENGTH, pattern: '^[^\\u0000-\\u001f]+$' };

/** The `:name` path parameter of resources. */
export const nameParams = {
  type: 'object',
  properties: { name },
  required: ['name'],
};

/** The `:name/versions/:version` path parameters. */
export const versionParams = {
  type: 'object',
  properties: {
    name,
    version: { type: 'integer', minimum: 1, maximum: 2147483647 },
  },
  required: ['name', 'version'],
};

/** The `:id` path parameter of keys and secrets. */
export const idParams = {
  type: 'object',
  properties: { id: { type: 'string', minLength: 1, maxLength: 100 } },
  required: ['id'],
};
