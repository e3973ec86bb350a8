import { ANSWERING_ROLES, answerRoleRefusal } from '@maitento/engine';
import type { MtError } from '@maitento/errors';
import { DEFAULT_NAMESPACE, isPlatformToken, type KeyRole, verifyPlatformToken } from '@maitento/store';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { serverErrors } from '../errors.js';
import type { RouteRole, ServerContext } from '../server/context.js';

/**
 * The key roles each route access admits: the one table behind every route's `config.role`, the OpenAPI document and
 * docs/roles.md (test/roles-doc.test.ts keeps the page equal to it). `answer` is the engine's `ANSWERING_ROLES`: the
 * same list its one decision "may this key answer this approval" starts with.
 */
export const ROUTE_ACCESS: Record<RouteRole, readonly KeyRole[]> = {
  read: ['admin', 'user', 'runner', 'approver'],
  run: ['admin', 'user', 'runner'],
  answer: ANSWERING_ROLES,
  admin: ['admin'],
  operator: ['admin'],
};

const ROLE_ACTIONS: Record<RouteRole, string> = {
  read: 'read here',
  run: 'start runs or call tools',
  answer: 'answer approvals',
  admin: 'change this namespace',
  operator: 'manage namespaces',
};

export function allowed(identity: FastifyRequest['identity'], role: RouteRole): boolean {
  if (!ROUTE_ACCESS[role].includes(identity.role)) return false;
  return role !== 'operator' || identity.namespace === DEFAULT_NAMESPACE;
}

/** Why `identity` may not call a route of `role`, or undefined when it may. */
export function accessRefusal(identity: FastifyRequest['identity'], role: RouteRole): MtError | undefined {
  if (allowed(identity, role)) return undefined;
  // A key that may not answer approvals is told so with the engine's code (the same decision as answerApproval's).
  if (role === 'answer') return answerRoleRefusal(identity.role);
  const roles = ROUTE_ACCESS[role];
  const least = roles.length === 1 ? roles[0]! : `${roles.slice(0, -1).join(', ')} or ${roles.at(-1)}`;
  return serverErrors.create('api:auth:forbidden', { action: ROLE_ACTIONS[role], role: least });
}

/**
 * Adds the API-key check to every route of `app`: `Authorization: Bearer <key>` must name a stored key or be
 * a valid platform token (401 otherwise), whose role the route's `config.role` must admit (`ROUTE_ACCESS`; 403 otherwise; `read` by default).
 */
export function registerAuth(app: FastifyInstance, ctx: ServerContext): void {
  app.decorateRequest('identity', undefined as unknown as FastifyRequest['identity']);
  // The identity's role must reach the route's; throws otherwise.
  const admit = (request: FastifyRequest, identity: FastifyRequest['identity']): void => {
    request.identity = identity;
    const refused = accessRefusal(identity, request.routeOptions.config.role ?? 'read');
    if (refused !== undefined) throw refused;
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
