import type { Connector, ConnectorRecord } from '@maitento/sdk';
import { versionNotFound } from '@maitento/store';
import { storeReads, versionedRoutes } from '../resources/versioned-routes.js';
import type { Api } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';

/** `/v1/connectors`: read connector versions, disable and enable them. */
export async function connectorRoutes(app: Api, ctx: ServerContext): Promise<void> {
  versionedRoutes(app, ctx, {
    noun: 'Connector',
    one: 'connector',
    many: 'connectors',
    notFound: 'api:connectors:not-found',
    reads: storeReads(ctx.db, 'connector'),
    deletes: { kind: 'connector', notFoundError: versionNotFound('connector') },
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
