import type { ListApprovalsQuery } from '@maitento/engine';
import type { FastifyInstance } from 'fastify';
import { answeringActor } from '../internal/actor.js';
import type { ServerContext } from '../internal/context.js';
import { emptyBodyIsEmptyObject } from '../internal/optional-body.js';
import { APPROVAL_STATUSES } from '@maitento/sdk';
import { idParams, responses } from '../schemas/shared.js';

/** `/v1/approvals`: the calls waiting for a person, in a run or not, each answered once. */
export async function approvalRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  const { engine } = ctx;
  app.get<{ Querystring: ListApprovalsQuery }>(
    '/approvals',
    {
      schema: {
        operationId: 'listApprovals',
        tags: ['approvals'],
        summary: 'The approvals of the namespace, newest first (the pending ones unless status says otherwise)',
        querystring: {
          type: 'object',
          properties: {
            status: { type: 'string', enum: [...APPROVAL_STATUSES, 'all'] },
            runId: { type: 'string', minLength: 1, maxLength: 100 },
            limit: { type: 'integer', minimum: 1, maximum: 200 },
          },
          additionalProperties: false,
        },
        response: responses({ 200: { type: 'array', items: { $ref: 'Approval#' } } }),
      },
    },
    async (request) => engine.listApprovals(request.identity.namespace, request.query),
  );

  app.get<{ Params: { id: string } }>(
    '/approvals/:id',
    {
      schema: {
        operationId: 'getApproval',
        tags: ['approvals'],
        summary: 'One approval',
        params: idParams,
        response: responses({ 200: { $ref: 'Approval#' } }),
      },
    },
    async (request) => engine.getApproval(request.identity.namespace, request.params.id),
  );

  for (const decision of ['approve', 'reject'] as const) {
    app.post<{ Params: { id: string }; Body: { reason?: string } }>(
      `/approvals/:id/${decision}`,
      {
        schema: {
          operationId: decision === 'approve' ? 'approveApproval' : 'rejectApproval',
          tags: ['approvals'],
          summary:
            decision === 'approve'
              ? 'Approve: exactly the call shown is made, once'
              : 'Reject with a reason; the call is not made',
          params: idParams,
          body: {
            type: 'object',
            properties: { reason: { type: 'string', minLength: 1, maxLength: 4000 } },
            additionalProperties: false,
          },
          response: responses({ 200: { $ref: 'Approval#' } }),
        },
        preValidation: emptyBodyIsEmptyObject,
      },
      async (request) => {
        const by = await answeringActor(ctx.db, request);
        const { reason } = request.body;
        return engine.answerApproval(request.identity.namespace, request.params.id, {
          decision,
          ...(reason === undefined ? {} : { reason }),
          by,
        });
      },
    );
  }
}
