import { DEFAULT_NAMESPACE, isPlatformToken, verifyPlatformToken } from '@maitento/store';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { serverErrors } from '../errors.js';
import type { RouteRole, ServerContext } from '../server/context.js';

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
  // The identity's role must reach the route's; throws otherwise.
  const admit = (request: FastifyRequest, identity: FastifyRequest['identity']): void => {
    request.identity = identity;
    const role = request.routeOptions.config.role ?? 'user';
    if (!allowed(identity, role)) {
      throw serverErrors.create('api:auth:forbidden', { action: ROLE_ACTIONS[role], role });
    }
  };
  const lookUp = async (request: FastifyRequest, key: string): Promise<void> => {
    // Every change committed before this request (by any server) is applied to the caches first: no statement while
    // the cache lease holds (the writer waited for this server's acknowledgement), else the epoch read.
    await ctx.cache.sync();
    // A platform token (what an `auth = "Maitento"` connector sends) is checked by its signature, not looked up.
    const identity = isPlatformToken(key)
      ? verifyPlatformToken(ctx.secretKey, key)
      : await ctx.cache.authenticateApiKey(key);
    if (!identity) throw serverErrors.create('api:auth:invalid-key');
    admit(request, identity);
  };
  // A hook with `done`: a known key while the cache needs no read (every call while the lease holds) is admitted at
  // once, without the promises and microtask turns of an async hook (docs/performance.md at 3251c0c); else `lookUp`.
  app.addHook('onRequest', (request, _reply, done) => {
    const header = request.headers.authorization;
    const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) return done(serverErrors.create('api:auth:missing-key'));
    const key = match[1];
    const known = isPlatformToken(key) ? undefined : ctx.cache.knownApiKey(key);
    if (known === undefined) {
      lookUp(request, key).then(() => done(), done);
      return;
    }
    try {
      admit(request, known);
    } catch (error) {
      return done(error as Error);
    }
    done();
  });
}
