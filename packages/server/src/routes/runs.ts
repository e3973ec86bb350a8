import type { RunStatus } from '@maitento/engine';
import {
  CancelRunBodySchema,
  ExtendBudgetBodySchema,
  IdParamsSchema,
  ListRunEventsQuerySchema,
  ListRunsQuerySchema,
  NameParamsSchema,
  RunAnswerBodySchema,
  RunEventsQuerySchema,
  RunRejectBodySchema,
  SendRunMessageBodySchema,
  StartRunBodySchema,
  TERMINAL_RUN_STATUSES,
} from '@maitento/sdk';
import { serverErrors } from '../errors.js';
import { answeringActor, auditContext, EDIT_ERRORS, editOf } from '../http/actor.js';
import { emptyBodyIsEmptyObject, rejectionNeedsReason } from '../http/optional-body.js';
import { APPROVAL_ID, AT, RUN, RUN_EVENTS } from '../openapi/examples.js';
import { LAST_EVENT_ID } from '../openapi/headers.js';
import { operation } from '../openapi/operation.js';
import type { Api } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';
import { type OpenStream, resumePoint, streamRunEvents } from '../streams/event-stream.js';

const TERMINAL: readonly RunStatus[] = TERMINAL_RUN_STATUSES;

/** The two answers to the approval a run waits on: one route each, declared alike. */
const ANSWER_RUN = {
  approve: operation({
    operationId: 'approveRun',
    tags: ['runs'],
    summary: 'Approve the call the run waits on: exactly that call is made',
    description:
      "Approves the call the run waits on (status PendingApproval), with a person's key: exactly that call is " +
      'made, and the run goes on. approvalId guards against answering another approval than the one shown.',
    params: IdParamsSchema,
    body: RunAnswerBodySchema,
    response: { 200: { $ref: 'Run#' } },
    ok: 'The run, going on',
    errors: [
      'api:runs:not-found',
      'api:runs:not-waiting',
      'api:approvals:not-pending-for-run',
      'api:approvals:already-answered',
      'api:approvals:closed',
      'api:approvals:expired',
      'api:approvals:person-required',
      ...EDIT_ERRORS,
    ],
    examples: { body: { approvalId: APPROVAL_ID, reason: 'The refund is within policy' } },
  }),
  reject: operation({
    operationId: 'rejectRun',
    tags: ['runs'],
    summary: 'Reject the call the run waits on, with a reason the model is told; it may redraft',
    description:
      "Rejects the call the run waits on, with a person's key and a reason the model is told; it may redraft " +
      'the call or give up.',
    params: IdParamsSchema,
    body: RunRejectBodySchema,
    response: { 200: { $ref: 'Run#' } },
    ok: 'The run, going on without that call',
    errors: [
      'api:runs:not-found',
      'api:runs:not-waiting',
      'api:approvals:not-pending-for-run',
      'api:approvals:already-answered',
      'api:approvals:closed',
      'api:approvals:expired',
      'api:approvals:reason-required',
      'api:approvals:person-required',
    ],
    examples: { body: { approvalId: APPROVAL_ID, reason: 'Order A-1042 was already refunded; check again' } },
  }),
};

/**
 * `/v1/interactions/:name/runs` and `/v1/runs`: start a run, follow it (one run, a page of runs, its
 * stored events, a live Server-Sent Events stream), cancel it, and answer the approval it waits on.
 */
export async function runRoutes(app: Api, ctx: ServerContext): Promise<void> {
  const { engine } = ctx;
  const open = new Set<OpenStream>();
  // Open streams would otherwise hold the server's close until their runs end.
  app.addHook('preClose', async () => {
    for (const stream of [...open]) stream.stop();
  });

  app.post(
    '/interactions/:name/runs',
    {
      config: { role: 'run' },
      schema: operation({
        operationId: 'startRun',
        tags: ['runs'],
        summary: 'Start a run of the interaction (its latest version, or the one named)',
        description:
          'Starts a run of the interaction (its latest enabled version, or the one named) with its inputs; the run ' +
          'goes on in a worker. Follow it with getRun, listRunEvents or streamRunEvents. interactive false is an ' +
          'app run: a tool that needs approval fails instead of waiting for a person. An auth input may name only a ' +
          'secret the calling key may use (an admin key: any of the namespace; a user key: those granted to it). Over a ' +
          "quota of the namespace (docs/quotas.md) the start answers 429 with Retry-After at the period's end; over " +
          "the interaction's limit on starts for the calling key or the end user (docs/limits.md) 429 " +
          'api:limits:exceeded with Retry-After, RateLimit and RateLimit-Policy, and nothing is stored.',
        params: NameParamsSchema,
        body: StartRunBodySchema,
        response: { 201: { $ref: 'Run#' } },
        ok: 'The run, as started (status Running)',
        errors: [
          'api:runs:secret-forbidden',
          'api:interactions:not-found',
          'api:interactions:input-required',
          'api:interactions:input-unknown',
          'api:interactions:input-invalid',
          'api:runs:input-too-large',
          'api:secrets:not-found',
          'api:quota:runs-exceeded',
          'api:limits:exceeded',
          'api:quota:tool-calls-exceeded',
          'api:quota:tokens-exceeded',
        ],
        examples: {
          body: { inputs: { message: 'Where is my order A-1042?' }, interactive: true },
          ok: { ...RUN, status: 'Running', result: null, updatedAt: AT, versions: RUN.versions },
        },
      }),
      preValidation: emptyBodyIsEmptyObject,
    },
    async (request, reply) => {
      const { inputs, interactive, version, endUser, budget } = request.body;
      const run = await engine.startRun(
        request.identity.namespace,
        request.params.name,
        {
          inputs: inputs ?? {},
          interactive: interactive ?? true,
          ...(version === undefined ? {} : { version }),
          ...(endUser === undefined ? {} : { endUser }),
          ...(budget === undefined ? {} : { budget }),
        },
        { keyId: request.identity.keyId },
        { traceparent: request.headers.traceparent as string | undefined },
      );
      return reply.status(201).send(run);
    },
  );

  app.get(
    '/runs',
    {
      schema: operation({
        operationId: 'listRuns',
        tags: ['runs'],
        summary: 'The runs of the namespace, newest first, one page at a time',
        description:
          'Lists the runs of the namespace, newest first, a page at a time: pass the nextCursor of a page as cursor ' +
          'to get the next. Filters by interaction and status.',
        querystring: ListRunsQuerySchema,
        response: { 200: { $ref: 'RunPage#' } },
        ok: 'One page of runs and the cursor of the next (null on the last page)',
        errors: ['api:runs:invalid-cursor'],
      }),
    },
    async (request) => engine.listRuns(request.identity.namespace, request.query, request.identity),
  );

  app.get(
    '/runs/:id',
    {
      schema: operation({
        operationId: 'getRun',
        tags: ['runs'],
        summary: 'One run',
        description:
          'Reads one run: its status, inputs, result or error, and the approval it waits on, if any. A secret input ' +
          'whose secret the calling key may not use shows as {"secret": true}.',
        params: IdParamsSchema,
        response: { 200: { $ref: 'Run#' } },
        ok: 'The run',
        errors: ['api:runs:not-found'],
      }),
    },
    async (request) => engine.getRun(request.identity.namespace, request.params.id, request.identity),
  );

  app.get(
    '/runs/:id/events',
    {
      schema: operation({
        operationId: 'listRunEvents',
        tags: ['runs'],
        summary: 'The stored events of a run with seq above `after`, in order, at most `limit` (default 100) at once',
        description:
          'Reads the stored events of a run after a seq, in order: what the model answered, which tools it called ' +
          'and with what result, approvals, and the end. Poll with after set to the last seq seen.',
        params: IdParamsSchema,
        querystring: ListRunEventsQuerySchema,
        response: { 200: { type: 'array', items: { $ref: 'RunEvent#' } } },
        ok: 'The events after `after`, in seq order',
        errors: ['api:runs:not-found'],
        examples: { ok: RUN_EVENTS },
      }),
    },
    async (request) =>
      engine.listEvents(
        request.identity.namespace,
        request.params.id,
        request.query.after ?? 0,
        request.query.limit,
        request.identity,
      ),
  );

  app.get(
    '/runs/:id/stream',
    {
      schema: operation({
        operationId: 'streamRunEvents',
        tags: ['runs'],
        summary:
          'The events of a run as Server-Sent Events (id: seq, event: type, data: the RunEvent), stored ones first, ' +
          'then live, until the run ends; resume with Last-Event-ID or ?after=',
        description:
          'Follows a run live as Server-Sent Events: its stored events first, then each new one as it happens, until ' +
          'the run ends. Resume after a disconnect with Last-Event-ID (or ?after=). Errors before the stream begins ' +
          'are JSON; one after it began is an `event: error`.',
        params: IdParamsSchema,
        querystring: RunEventsQuerySchema,
        parameters: [LAST_EVENT_ID],
        response: {
          200: {
            description:
              'A text/event-stream (Server-Sent Events), not one JSON value. Each event is framed as `id: <seq>`, ' +
              '`event: <type>`, `data: <one RunEvent as JSON>`, then a blank line; its data follows the RunEvent ' +
              'schema (named under x-event-schema). Lines starting with `:` are keep-alive comments. A failure ' +
              'after the stream began is one `event: error` whose data is `{ error, code, status }`. The stream ends after the ' +
              "run's terminal event.",
            content: {
              'text/event-stream': {
                schema: { type: 'string', description: 'Server-Sent Events; each data line is one RunEvent' },
                'x-event-schema': { $ref: 'RunEvent#' },
              },
            },
          },
        },
        ok: 'The events of the run as a text/event-stream',
        errors: ['api:runs:not-found', 'api:runs:too-many-streams'],
        examples: {
          oks: {
            'text/event-stream': RUN_EVENTS.map(
              ({ seq, type, ...rest }) =>
                `id: ${seq}\nevent: ${type}\ndata: ${JSON.stringify({ seq, type, ...rest })}\n\n`,
            ).join(''),
          },
        },
      }),
    },
    async (request, reply) => {
      const namespace = request.identity.namespace;
      // Looked up first, so an unknown run answers 404 as JSON before the stream starts.
      const run = await engine.getRun(namespace, request.params.id);
      // Taken before the stream starts, so a key over its limit gets a 429 as JSON; given back when it ends.
      // One count per key, shared with the console's live streams (ctx.runStreams).
      const release = ctx.runStreams.acquire(request.identity.keyId);
      try {
        await streamRunEvents(request, reply, {
          engine,
          namespace,
          viewer: request.identity,
          runId: run.id,
          after: resumePoint(request.headers['last-event-id'], request.query.after) ?? 0,
          ended: TERMINAL.includes(run.status),
          timing: ctx.streamTiming,
          open,
          wakeups: ctx.wakeups,
          // A deleted key's streams end at once, with the error its next request would get.
          endWhen: (stop) =>
            ctx.keys.watch(request.identity.keyId, () => stop(serverErrors.create('api:auth:invalid-key'))),
        });
      } finally {
        release();
      }
    },
  );

  app.post(
    '/runs/:id/cancel',
    {
      config: { role: 'run' },
      schema: operation({
        operationId: 'cancelRun',
        tags: ['runs'],
        summary: 'Cancel a run that has not ended',
        description: 'Cancels a run that has not ended; a call in flight is abandoned and the run ends Cancelled.',
        params: IdParamsSchema,
        body: CancelRunBodySchema,
        response: { 200: { $ref: 'Run#' } },
        ok: 'The run, now Cancelled',
        errors: ['api:runs:not-found', 'api:runs:already-ended'],
        examples: {
          body: {},
          ok: {
            ...RUN,
            status: 'Cancelled',
            result: null,
          },
        },
      }),
      preValidation: emptyBodyIsEmptyObject,
    },
    async (request) =>
      engine.cancelRun(request.identity.namespace, request.params.id, request.identity, auditContext(request)),
  );

  app.post(
    '/runs/:id/budget',
    {
      config: { role: 'answer' },
      schema: operation({
        operationId: 'extendRunBudget',
        tags: ['runs'],
        summary: 'Extend the budget of a run that reached it (PendingBudget); the run goes on',
        description:
          'Gives a run that waits for its budget to be extended (status PendingBudget, docs/runs.md "Usage and ' +
          'budgets") a new budget: each limit given replaces the old one, one not given stays. The run is Running ' +
          'again and goes on from where it stopped; a run.budget-extended row is audited. With onExceeded "fail" and ' +
          'no limit above what it spent, the run fails at once (api:runs:budget-exceeded; run.budget-declined).',
        params: IdParamsSchema,
        body: ExtendBudgetBodySchema,
        response: { 200: { $ref: 'Run#' } },
        ok: 'The run, running again with its new budget (or Failed, let fail)',
        errors: [
          'api:runs:not-found',
          'api:runs:not-waiting-for-budget',
          'api:runs:budget-too-small',
          'api:runs:already-ended',
        ],
        examples: {
          body: { tokens: 40000 },
          ok: { ...RUN, status: 'Running', result: null, budget: { tokens: 40000, costUsd: null, onExceeded: 'wait' } },
        },
      }),
    },
    async (request) => {
      const by = await answeringActor(ctx.db, request);
      return engine.extendBudget(
        request.identity.namespace,
        request.params.id,
        request.body,
        by,
        request.identity,
        auditContext(request),
      );
    },
  );

  app.post(
    '/runs/:id/messages',
    {
      config: { role: 'run' },
      schema: operation({
        operationId: 'sendRunMessage',
        tags: ['runs'],
        summary: 'Send the next message of a conversation that waits for one (WaitingForInput); the run goes on',
        description:
          'Sends the next message of a conversation (an interaction with conversation) that waits for one ' +
          '(status WaitingForInput); the run goes on with it.',
        params: IdParamsSchema,
        body: SendRunMessageBodySchema,
        response: { 200: { $ref: 'Run#' } },
        ok: 'The run, running again',
        errors: [
          'api:runs:not-found',
          'api:runs:not-waiting-for-input',
          'api:runs:message-empty',
          'api:runs:already-ended',
        ],
        examples: { body: { text: 'And when will the refund arrive?' } },
      }),
    },
    async (request) => {
      const by = await answeringActor(ctx.db, request);
      return engine.sendMessage(request.identity.namespace, request.params.id, request.body.text, by, request.identity);
    },
  );

  for (const decision of ['approve', 'reject'] as const) {
    app.post(
      `/runs/:id/${decision}`,
      {
        config: { role: 'answer' },
        schema: ANSWER_RUN[decision],
        preValidation: decision === 'approve' ? emptyBodyIsEmptyObject : rejectionNeedsReason,
      },
      async (request) => {
        const by = await answeringActor(ctx.db, request);
        const { approvalId, reason } = request.body;
        return engine.answerRunApproval(
          request.identity.namespace,
          request.params.id,
          approvalId,
          {
            decision,
            ...(reason === undefined ? {} : { reason }),
            by,
            audit: auditContext(request),
            ...editOf(request.body),
          },
          request.identity,
        );
      },
    );
  }
}
