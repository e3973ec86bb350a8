import type { AuthProvider, AuthProviderRecord } from '@maitento/sdk';
import { versionNotFound } from '@maitento/store';
import { storeReads, versionedRoutes } from '../resources/versioned-routes.js';
import type { Api } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';

/** `/v1/auth-providers`: read auth provider versions (the client secret by name only), disable and enable them. */
export async function authProviderRoutes(app: Api, ctx: ServerContext): Promise<void> {
  versionedRoutes(app, ctx, {
    noun: 'AuthProvider',
    one: 'auth provider',
    many: 'auth providers',
    notFound: 'api:auth-providers:not-found',
    deletes: { kind: 'auth-provider', notFoundError: versionNotFound('auth-provider') },
    reads: storeReads(ctx.db, 'auth-provider'),
    toggles: 'auth-provider',
    path: '/auth-providers',
    tag: 'auth-providers',
    detailSchema: { $ref: 'AuthProviderRecord#' },
    detail: (stored): AuthProviderRecord => ({
      name: stored.name,
      version: stored.version,
      enabled: stored.enabled,
      createdAt: stored.createdAt,
      hash: stored.hash,
      resource: stored.resource as AuthProvider,
    }),
  });
}
