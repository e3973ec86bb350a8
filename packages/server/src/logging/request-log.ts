import type { FastifyInstance } from 'fastify';

const VERBOSE = new Set(['debug', 'trace']);

/**
 * Logs one line per finished request instead of fastify's two: at warn when it failed (5xx) or was slower than
 * `slowMs`, at debug otherwise, so a server at the default info level writes nothing for a request that went
 * well. The line holds the method, the route pattern (never the raw URL, which may carry query values), the
 * status and the time; no header and no body.
 */
export function registerRequestLog(app: FastifyInstance, slowMs: number): void {
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
