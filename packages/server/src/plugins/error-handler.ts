import { isMtError } from '@maitento/errors';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { serverErrors } from '../errors.js';

// Fastify's own 4xx errors (bad JSON, empty body, size, media type) get a registry code too.
function fastifyClientError(error: FastifyError, bodyLimit: number, contentType: string | undefined) {
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return serverErrors.create('api:request:too-large', { limit: bodyLimit });
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return serverErrors.create('api:request:unsupported-media-type', { type: contentType ?? 'none' });
  }
  return serverErrors.create('api:request:invalid', { detail: error.message });
}

const BEARER_REFUSALS = new Set(['api:auth:missing-key', 'api:auth:invalid-key']);

/**
 * Installs the one error handler: registry errors answer `{ error, code }` (plus `diagnostics` when the
 * error carries them) with their status; validation and other client errors answer 400 with a code;
 * anything else is logged and answers 500 without details. Unknown routes answer 404 with a code; a known
 * path asked with a method it does not take answers 405 with `Allow` (not under /console, whose pages answer 404).
 */
export function registerErrorHandler(app: FastifyInstance, bodyLimit: number, maxParamLength: number): void {
  // The routes' methods by path, matched the way fastify's router matches a URL (it has no lookup by URL).
  const methodsByPath = FindMyWay({ maxParamLength, defaultRoute: () => {} });
  const methods = new Set<string>();
  app.addHook('onRoute', (route) => {
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      if (methodsByPath.hasRoute(method as HTTPMethod, route.url)) continue;
      methodsByPath.on(method as HTTPMethod, route.url, () => {});
      methods.add(method);
    }
  });
  const allowedMethods = (path: string): string[] =>
    [...methods].filter((method) => methodsByPath.find(method as HTTPMethod, path) !== null).sort();
  app.setErrorHandler((error: FastifyError, request, reply) => {
    let mtError = isMtError(error) ? error : undefined;
    if (!mtError && error.validation) {
      mtError = serverErrors.create('api:request:invalid', { detail: error.message });
    } else if (!mtError && typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      // A route may take larger bodies than the server's default (a knowledge base's documents).
      mtError = fastifyClientError(error, request.routeOptions.bodyLimit ?? bodyLimit, request.headers['content-type']);
    }
    if (!mtError) {
      request.log.error({ err: error }, 'request failed');
      mtError = serverErrors.create('api:server:internal');
    } else if (mtError.status >= 500) {
      request.log.error({ code: mtError.code }, mtError.message);
    }
    // A refusal that knows when to try again (a namespace's quota: the period's end) says so (RFC 9110 §10.2.3).
    const retryAfter = (mtError.details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
    if (typeof retryAfter === 'number') reply.header('retry-after', String(retryAfter));
    // A start over its interaction's limit (docs/limits.md): the IETF RateLimit fields, as a tool call's 429 has them.
    const fields = mtError.details as { rateLimit?: unknown; rateLimitPolicy?: unknown } | undefined;
    if (typeof fields?.rateLimit === 'string') reply.header('ratelimit', fields.rateLimit);
    if (typeof fields?.rateLimitPolicy === 'string') reply.header('ratelimit-policy', fields.rateLimitPolicy);

    // A missing or refused API key (REST and /mcp) names the scheme to use, as RFC 9110 asks of a 401.
    if (BEARER_REFUSALS.has(mtError.code)) reply.header('www-authenticate', 'Bearer realm="maitento"');
    const body: Record<string, unknown> = { error: mtError.message, code: mtError.code };
    const details = mtError.details as { diagnostics?: unknown; authorization?: unknown } | undefined;
    if (details?.diagnostics !== undefined) body.diagnostics = details.diagnostics;
    // A direct tool call whose end user must connect first: their connect link (decision 0335).
    if (details?.authorization !== undefined) body.authorization = details.authorization;
    return reply.status(mtError.status).send(body);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    const allow = path.startsWith('/console') ? [] : allowedMethods(path);
    if (allow.length > 0) {
      const error = serverErrors.create('api:request:method-not-allowed', {
        method: request.method,
        url: path,
        allow: allow.join(', '),
      });
      return reply.status(405).header('allow', allow.join(', ')).send(error.toJSON());
    }
    const error = serverErrors.create('api:request:not-found', {
      method: request.method,
      url: request.url.split('?')[0],
    });
    return reply.status(404).send(error.toJSON());
  });
}

/**
 * Answers the router's own refusals (a path that is not valid percent-encoding, a path segment longer
 * than the router takes) with `api:request:invalid` instead of fastify's uncoded body.
 */
export function frameworkErrorHandler(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const detail =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'A path segment of the URL is too long' : 'The URL is not valid';
  const mtError = serverErrors.create('api:request:invalid', { detail });
  reply.status(mtError.status).send({ error: mtError.message, code: mtError.code });
}
