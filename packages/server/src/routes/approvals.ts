import type { OperationRequest } from '@maitento/sdk';
import type { FastifyInstance } from 'fastify';
import { answeringActor } from '../http/actor.js';
import type { ServerContext } from '../server/context.js';
import { emptyBodyIsEmptyObject, rejectionNeedsReason } from '../http/optional-body.js';
import { operation, responses } from '../schemas/shared.js';

/** `/v1/approvals`: the calls waiting for a person, in a run or not, each answered once. */
export async function approvalRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  const { engine } = ctx;
  app.get<OperationRequest<'listApprovals'>>(
    '/approvals',
    {
      schema: {
        ...operation('listApprovals'),
        tags: ['approvals'],
        summary: 'The approvals of the namespace, newest first (the pending ones unless status says otherwise)',
        response: responses({ 200: { type: 'array', items: { $ref: 'Approval#' } } }),
      },
    },
    async (request) => engine.listApprovals(request.identity.namespace, request.query),
  );

  app.get<OperationRequest<'getApproval'>>(
    '/approvals/:id',
    {
      schema: {
        ...operation('getApproval'),
        tags: ['approvals'],
        summary: 'One approval',
        response: responses({ 200: { $ref: 'Approval#' } }),
      },
    },
    async (request) => engine.getApproval(request.identity.namespace, request.params.id),
  );

  for (const decision of ['approve', 'reject'] as const) {
    app.post<OperationRequest<'approveApproval' | 'rejectApproval'>>(
      `/approvals/:id/${decision}`,
      {
        schema: {
          ...operation(decision === 'approve' ? 'approveApproval' : 'rejectApproval'),
          tags: ['approvals'],
          summary:
            decision === 'approve'
              ? 'Approve: exactly the call shown is made, once'
              : 'Reject with a reason; the call is not made',
          response: responses({ 200: { $ref: 'Approval#' } }),
        },
        preValidation: decision === 'approve' ? emptyBodyIsEmptyObject : rejectionNeedsReason,
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
