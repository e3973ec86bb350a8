import type { RunStatus } from '@maitento/engine';
import type { OperationRequest } from '@maitento/sdk';
import type { FastifyInstance } from 'fastify';
import { serverErrors } from '../errors.js';
import { answeringActor } from '../http/actor.js';
import type { ServerContext } from '../server/context.js';
import { emptyBodyIsEmptyObject, rejectionNeedsReason } from '../http/optional-body.js';
import { type OpenStream, resumePoint, streamRunEvents } from '../streams/event-stream.js';
import { operation, responses } from '../schemas/shared.js';

const TERMINAL: RunStatus[] = ['Completed', 'Failed', 'Cancelled'];

/**
 * `/v1/interactions/:name/runs` and `/v1/runs`: start a run, follow it (one run, a page of runs, its
 * stored events, a live Server-Sent Events stream), cancel it, and answer the approval it waits on.
 */
export async function runRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  const { engine } = ctx;
  const open = new Set<OpenStream>();
  // Open streams would otherwise hold the server's close until their runs end.
  app.addHook('preClose', async () => {
    for (const stream of [...open]) stream.stop();
  });

  app.post<OperationRequest<'startRun'>>(
    '/interactions/:name/runs',
    {
      schema: {
        ...operation('startRun'),
        tags: ['runs'],
        summary: 'Start a run of the interaction (its latest version, or the one named)',
        response: responses({ 201: { $ref: 'Run#' } }),
      },
      preValidation: emptyBodyIsEmptyObject,
    },
    async (request, reply) => {
      const { inputs, interactive, version } = request.body;
      const run = await engine.startRun(
        request.identity.namespace,
        request.params.name,
        { inputs: inputs ?? {}, interactive: interactive ?? true, ...(version === undefined ? {} : { version }) },
        { keyId: request.identity.keyId },
        { traceparent: request.headers.traceparent as string | undefined },
      );
      return reply.status(201).send(run);
    },
  );

  app.get<OperationRequest<'listRuns'>>(
    '/runs',
    {
      schema: {
        ...operation('listRuns'),
        tags: ['runs'],
        summary: 'The runs of the namespace, newest first, one page at a time',
        response: responses({ 200: { $ref: 'RunPage#' } }),
      },
    },
    async (request) => engine.listRuns(request.identity.namespace, request.query),
  );

  app.get<OperationRequest<'getRun'>>(
    '/runs/:id',
    {
      schema: {
        ...operation('getRun'),
        tags: ['runs'],
        summary: 'One run',
        response: responses({ 200: { $ref: 'Run#' } }),
      },
    },
    async (request) => engine.getRun(request.identity.namespace, request.params.id, request.identity),
  );

  app.get<OperationRequest<'listRunEvents'>>(
    '/runs/:id/events',
    {
      schema: {
        ...operation('listRunEvents'),
        tags: ['runs'],
        summary: 'The stored events of a run with seq above `after`, in order, at most `limit` (default 100) at once',
        response: responses({ 200: { type: 'array', items: { $ref: 'RunEvent#' } } }),
      },
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

  app.get<OperationRequest<'streamRunEvents'>>(
    '/runs/:id/stream',
    {
      schema: {
        ...operation('streamRunEvents'),
        tags: ['runs'],
        summary:
          'The events of a run as Server-Sent Events (id: seq, event: type, data: the RunEvent), stored ones first, ' +
          'then live, until the run ends; resume with Last-Event-ID or ?after=',
        response: responses({
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
        }),
      },
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

  app.post<OperationRequest<'cancelRun'>>(
    '/runs/:id/cancel',
    {
      schema: {
        ...operation('cancelRun'),
        tags: ['runs'],
        summary: 'Cancel a run that has not ended',
        response: responses({ 200: { $ref: 'Run#' } }),
      },
      preValidation: emptyBodyIsEmptyObject,
    },
    async (request) => engine.cancelRun(request.identity.namespace, request.params.id, request.identity),
  );

  app.post<OperationRequest<'sendRunMessage'>>(
    '/runs/:id/messages',
    {
      schema: {
        ...operation('sendRunMessage'),
        tags: ['runs'],
        summary: 'Send the next message of a conversation that waits for one (WaitingForInput); the run goes on',
        response: responses({ 200: { $ref: 'Run#' } }),
      },
    },
    async (request) => {
      const by = await answeringActor(ctx.db, request);
      return engine.sendMessage(request.identity.namespace, request.params.id, request.body.text, by, request.identity);
    },
  );

  for (const decision of ['approve', 'reject'] as const) {
    app.post<OperationRequest<'approveRun' | 'rejectRun'>>(
      `/runs/:id/${decision}`,
      {
        schema: {
          ...operation(decision === 'approve' ? 'approveRun' : 'rejectRun'),
          tags: ['runs'],
          summary:
            decision === 'approve'
              ? 'Approve the call the run waits on: exactly that call is made'
              : 'Reject the call the run waits on, with a reason the model is told; it may redraft',
          response: responses({ 200: { $ref: 'Run#' } }),
        },
        preValidation: decision === 'approve' ? emptyBodyIsEmptyObject : rejectionNeedsReason,
      },
      async (request) => {
        const by = await answeringActor(ctx.db, request);
        const { approvalId, reason } = request.body;
        return engine.answerRunApproval(
          request.identity.namespace,
          request.params.id,
          approvalId,
          { decision, ...(reason === undefined ? {} : { reason }), by },
          request.identity,
        );
      },
    );
  }
}
