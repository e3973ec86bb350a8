import {
  ApprovalAnswerBodySchema,
  ApprovalRejectBodySchema,
  IdParamsSchema,
  ListApprovalsQuerySchema,
} from '@maitento/sdk';
import { answeringActor, auditContext, EDIT_ERRORS, editOf } from '../http/actor.js';
import { emptyBodyIsEmptyObject, rejectionNeedsReason } from '../http/optional-body.js';
import { ANSWERED } from '../openapi/examples.js';
import { operation } from '../openapi/operation.js';
import type { Api } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';

/** The two answers to an approval: one route each, declared alike. */
const ANSWER_APPROVAL = {
  approve: operation({
    operationId: 'approveApproval',
    tags: ['approvals'],
    summary: 'Approve: exactly the call shown is made, once',
    description:
      "Approves a pending call with a person's key: exactly that call is made (by its run, or by the MCP client " +
      'that asked, on its retry). With arguments (and the requestHash the approver saw), the call of a run is ' +
      "made with those arguments instead of the model's: they are prepared as the model's call is (the values the " +
      'tool or the run fixes merged in, the request schema checked), the approval shows the edited call and its new ' +
      "hash, and the model's next turn is told what they became (docs/roles.md, Edit, then approve).",
    params: IdParamsSchema,
    body: ApprovalAnswerBodySchema,
    response: { 200: { $ref: 'Approval#' } },
    ok: 'The approval, now Approved',
    errors: [
      'api:approvals:not-found',
      'api:approvals:already-answered',
      'api:approvals:closed',
      'api:approvals:expired',
      'api:approvals:person-required',
      ...EDIT_ERRORS,
    ],
    examples: {
      body: { reason: 'The refund is within policy' },
      ok: { ...ANSWERED, status: 'Approved', reason: 'The refund is within policy' },
    },
  }),
  reject: operation({
    operationId: 'rejectApproval',
    tags: ['approvals'],
    summary: 'Reject with a reason; the call is not made',
    description:
      "Rejects a pending call with a person's key and a reason; the call is not made and the model is told why.",
    params: IdParamsSchema,
    body: ApprovalRejectBodySchema,
    response: { 200: { $ref: 'Approval#' } },
    ok: 'The approval, now Rejected',
    errors: [
      'api:approvals:not-found',
      'api:approvals:already-answered',
      'api:approvals:closed',
      'api:approvals:expired',
      'api:approvals:reason-required',
      'api:approvals:person-required',
    ],
    examples: {
      body: { reason: 'Order A-1042 was already refunded; check again' },
      ok: { ...ANSWERED, status: 'Rejected', reason: 'Order A-1042 was already refunded; check again' },
    },
  }),
};

/** `/v1/approvals`: the calls waiting for a person, in a run or not, each answered once. */
export async function approvalRoutes(app: Api, ctx: ServerContext): Promise<void> {
  const { engine } = ctx;
  app.get(
    '/approvals',
    {
      schema: operation({
        operationId: 'listApprovals',
        tags: ['approvals'],
        summary: 'The approvals of the namespace, newest first (the pending ones unless status says otherwise)',
        description:
          'Lists the approvals of the namespace, newest first: the calls waiting for a person (Pending) unless status ' +
          'asks for answered or expired ones.',
        querystring: ListApprovalsQuerySchema,
        response: { 200: { type: 'array', items: { $ref: 'Approval#' } } },
        ok: 'The approvals',
        errors: [],
      }),
    },
    async (request) => engine.listApprovals(request.identity.namespace, request.query, request.identity),
  );

  app.get(
    '/approvals/:id',
    {
      schema: operation({
        operationId: 'getApproval',
        tags: ['approvals'],
        summary: 'One approval',
        description: 'Reads one approval: the tool, the exact arguments of the call, who answered and when it expires.',
        params: IdParamsSchema,
        response: { 200: { $ref: 'Approval#' } },
        ok: 'The approval',
        errors: ['api:approvals:not-found'],
      }),
    },
    async (request) => engine.getApproval(request.identity.namespace, request.params.id, request.identity),
  );

  for (const decision of ['approve', 'reject'] as const) {
    app.post(
      `/approvals/:id/${decision}`,
      {
        config: { role: 'answer' },
        schema: ANSWER_APPROVAL[decision],
        preValidation: decision === 'approve' ? emptyBodyIsEmptyObject : rejectionNeedsReason,
      },
      async (request) => {
        const by = await answeringActor(ctx.db, request);
        const { reason } = request.body;
        return engine.answerApproval(request.identity.namespace, request.params.id, {
          decision,
          ...(reason === undefined ? {} : { reason }),
          by,
          audit: auditContext(request),
          ...editOf(request.body),
        });
      },
    );
  }
}
