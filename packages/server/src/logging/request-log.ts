import type { FastifyInstance } from 'fastify';
import { bindRequestLog } from './logging.js';

const VERBOSE = new Set(['debug', 'trace']);

/**
 * Logs one line per finished request instead of fastify's two: at warn when it failed (5xx) or was slower than
 * `slowMs`, at debug otherwise, so a server at the default info level writes nothing for a request that went
 * well. The line holds the method, the route pattern (never the raw URL, which may carry query values), the
 * status and the time; no header and no body.
 */
export function registerRequestLog(app: FastifyInstance, slowMs: number): void {
  // A request about a run names it on every line it writes (`runId`), as every line about a run does: bound once the
  // route's parameters are known, before the handler (a line not yet written costs nothing).
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.routeOptions.url?.startsWith('/v1/runs/:id')) {
      const id = (request.params as { id?: unknown }).id;
      if (typeof id === 'string') bindRequestLog(request, { runId: id });
    }
    done();
  });
  // A hook with `done`, not an async one: no promise and no microtask turn for the requests it writes nothing for.
  app.addHook('onResponse', (request, reply, done) => {
    const ms = reply.elapsedTime;
    const failed = reply.statusCode >= 500;
    // Above debug the line would be dropped anyway: do not build it.
    if (!failed && ms < slowMs && !VERBOSE.has(request.log.level)) return done();
    const line = {
      method: request.method,
      route: request.routeOptions.url ?? '(no route)',
      statusCode: reply.statusCode,
      responseTimeMs: Math.round(ms * 10) / 10,
    };
    if (failed) request.log.warn(line, 'request failed');
    else if (ms >= slowMs) request.log.warn(line, 'slow request');
    else request.log.debug(line, 'request');
    done();
  });
}
