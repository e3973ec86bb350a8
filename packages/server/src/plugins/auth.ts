import { DEFAULT_NAMESPACE, isPlatformToken, verifyPlatformToken } from '@maitento/store';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { serverErrors } from '../errors.js';
import type { RouteRole, ServerContext } from '../internal/context.js';

const ROLE_ACTIONS: Record<RouteRole, string> = {
  user: 'read here',
  admin: 'change this namespace',
  operator: 'manage namespaces',
};

export function allowed(identity: FastifyRequest['identity'], role: RouteRole): boolean {
  if (role === 'user') return true;
  if (role === 'admin') return identity.role === 'admin';
  return identity.role === 'admin' && identity.namespace === DEFAULT_NAMESPACE;
}

/**
 * Adds the API-key check to every route of `app`: `Authorization: Bearer <key>` must name a stored key or be
 * a valid platform token (401 otherwise), whose role must reach the route's `config.role` (403 otherwise; `user` by default).
 */
export function registerAuth(app: FastifyInstance, ctx: ServerContext): void {
  app.decorateRequest('identity', undefined as unknown as FastifyRequest['identity']);
  app.addHook('onRequest', async (request) => {
    const header = request.headers.authorization;
    const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw serverErrors.create('api:auth:missing-key');
    // Every change committed before this request (by any server) is applied to the caches first: no statement while
    // the cache lease holds (the writer waited for this server's acknowledgement), else the epoch read.
    await ctx.cache.sync();
    // A platform token (what an `auth = "Maitento"` connector sends) is checked by its signature, not looked up.
    const identity = isPlatformToken(match[1])
      ? verifyPlatformToken(ctx.secretKey, match[1])
      : await ctx.cache.authenticateApiKey(match[1]);
    if (!identity) throw serverErrors.create('api:auth:invalid-key');
    request.identity = identity;
    const role = request.routeOptions.config.role ?? 'user';
    if (!allowed(identity, role)) {
      throw serverErrors.create('api:auth:forbidden', { action: ROLE_ACTIONS[role], role });
    }
  });
}
