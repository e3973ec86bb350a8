import type { Connector, ConnectorRecord } from '@maitento/sdk';
import type { FastifyInstance } from 'fastify';
import type { ServerContext } from '../server/context.js';
import { storeReads, versionedRoutes } from '../resources/versioned-routes.js';

/** `/v1/connectors`: read connector versions, disable and enable them. */
export async function connectorRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  versionedRoutes(app, ctx, {
    noun: 'Connector',
    reads: storeReads(ctx.db, 'connector'),
    toggles: 'connector',
    path: '/connectors',
    tag: 'connectors',
    detailSchema: { $ref: 'ConnectorRecord#' },
    detail: (stored): ConnectorRecord => ({
      name: stored.name,
      version: stored.version,
      enabled: stored.enabled,
      createdAt: stored.createdAt,
      hash: stored.hash,
      resource: stored.resource as Connector,
    }),
  });
}
