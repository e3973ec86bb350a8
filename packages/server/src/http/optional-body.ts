import { engineErrors } from '@maitento/engine';
import type { FastifyRequest } from 'fastify';

/** A `preValidation` hook: a POST whose body fields are all optional may be sent with no body at all. */
export async function emptyBodyIsEmptyObject(request: FastifyRequest): Promise<void> {
  if (request.body === undefined || request.body === null) request.body = {};
}

/**
 * A rejection's `preValidation` hook: its body and `reason` are required (and so published), but one sent without
 * a reason (or with no body) answers the rule's own code, 422 `api:approvals:reason-required`, as the engine does
 * for a blank one, rather than a schema error.
 */
export async function rejectionNeedsReason(request: FastifyRequest): Promise<void> {
  const body = request.body;
  if (body === undefined || body === null || (typeof body === 'object' && !('reason' in body))) {
    throw engineErrors.create('api:approvals:reason-required');
  }
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
