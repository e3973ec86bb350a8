import type { FastifyInstance } from 'fastify';
import type { ServerContext } from '../internal/context.js';
import { versionDetailProperties, versionedRoutes } from '../internal/versioned-routes.js';

/** `/v1/connectors`: read connector versions, disable and enable them. */
export async function connectorRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  versionedRoutes(app, ctx, {
    noun: 'Connector',
    kind: 'connector',
    path: '/connectors',
    tag: 'connectors',
    detailSchema: {
      type: 'object',
      properties: { ...versionDetailProperties, resource: { $ref: 'Connector#' } },
      required: ['name', 'version', 'enabled', 'createdAt', 'hash', 'resource'],
    },
    detail: (stored) => ({
      name: stored.name,
      version: stored.version,
      enabled: stored.enabled,
      createdAt: stored.createdAt,
      hash: stored.hash,
      resource: stored.resource,
    }),
  });
}
