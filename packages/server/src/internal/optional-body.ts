import type { FastifyRequest } from 'fastify';

/** A `preValidation` hook: a POST whose body fields are all optional may be sent with no body at all. */
export async function emptyBodyIsEmptyObject(request: FastifyRequest): Promise<void> {
  if (request.body === undefined || request.body === null) request.body = {};
}

/**
 * The same for a body the route requires but whose missing fields its handler reports with a code of its own
 * (a rejection without its reason: `api:approvals:reason-required`); the document keeps such a body required.
 */
export async function emptyBodyReportedByHandler(request: FastifyRequest): Promise<void> {
  await emptyBodyIsEmptyObject(request);
}

/**
 * True when the route lets its body be left out: {@link emptyBodyIsEmptyObject} among its `preValidation` hooks
 * (as fastify gives them to an `onRoute` hook: one hook, a list, or none).
 */
export function takesOptionalBody(preValidation: unknown): boolean {
  return Array.isArray(preValidation)
    ? preValidation.includes(emptyBodyIsEmptyObject)
    : preValidation === emptyBodyIsEmptyObject;
}

/**
 * Marks the request bodies of these operations as optional in an OpenAPI document: `@fastify/swagger` publishes
 * every body as required, but these routes take a request with none (a client generator would demand one).
 */
export function markOptionalBodies(document: unknown, operationIds: ReadonlySet<string>): void {
  const paths = (document as { paths?: Record<string, Record<string, unknown>> }).paths ?? {};
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      const op = operation as { operationId?: string; requestBody?: { required?: boolean } };
      if (op.requestBody && op.operationId !== undefined && operationIds.has(op.operationId)) {
        op.requestBody.required = false;
      }
    }
  }
}
