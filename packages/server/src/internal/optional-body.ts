import type { FastifyRequest } from 'fastify';

/** A `preValidation` hook: a POST whose body fields are all optional may be sent with no body at all. */
export async function emptyBodyIsEmptyObject(request: FastifyRequest): Promise<void> {
  if (request.body === undefined || request.body === null) request.body = {};
}
