import { isMtError } from '@maitento/errors';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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

/**
 * Installs the one error handler: registry errors answer `{ error, code }` (plus `diagnostics` when the
 * error carries them) with their status; validation and other client errors answer 400 with a code;
 * anything else is logged and answers 500 without details. Unknown routes answer 404 with a code.
 */
export function registerErrorHandler(app: FastifyInstance, bodyLimit: number): void {
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
    const body: Record<string, unknown> = { error: mtError.message, code: mtError.code };
    const details = mtError.details as { diagnostics?: unknown } | undefined;
    if (details?.diagnostics !== undefined) body.diagnostics = details.diagnostics;
    return reply.status(mtError.status).send(body);
  });
  app.setNotFoundHandler((request, reply) => {
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
