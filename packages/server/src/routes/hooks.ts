import { isMtError } from '@maitento/errors';
import { StartDeclined } from '@maitento/engine';
import { MAX_TRIGGER_BODY, type Trigger } from '@maitento/lang';
import { ListScheduleTicksQuerySchema, NameParamsSchema } from '@maitento/sdk';
import {
  countTriggerRejection,
  findDelivery,
  latestTrigger,
  listDeliveries,
  recordDelivery,
  triggerRejections,
} from '@maitento/store';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { serverErrors } from '../errors.js';
import { pointerValue, verifyDelivery } from '../hooks/verify.js';
import { operation } from '../openapi/operation.js';
import { deleteRoute } from '../resources/delete-route.js';
import type { Api } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';

const EVENT_ID_MAX = 200;

/** The error body the error handler would send, for an answer a replay repeats. */
const errorBody = (error: { message: string; code: string }) => ({ error: error.message, code: error.code });

/**
 * `POST /v1/hooks/{namespace}/{name}`: an inbound webhook (docs/schedules-and-triggers.md). No API key: the delivery
 * is verified with the trigger's secret. Registered outside the API key check, with the raw body (the signature is
 * over its bytes).
 */
export async function hookRoutes(app: Api, ctx: ServerContext): Promise<void> {
  // The body as its bytes, whatever its media type: the signature is over them, JSON is parsed after.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  app.post(
    '/hooks/:namespace/:name',
    {
      bodyLimit: MAX_TRIGGER_BODY,
      schema: operation({
        operationId: 'deliverHook',
        tags: ['hooks'],
        summary: "An inbound webhook: verified with the trigger's secret, it starts a run (no API key)",
        description:
          "Takes one delivery of the sender's webhook for the trigger `triggers/{name}.mtr` of the namespace: checks " +
          'its size, verifies its signature (Standard Webhooks, GitHub X-Hub-Signature-256 or Stripe-Signature, as ' +
          "the trigger says) with the trigger's secret, maps its JSON payload to the run inputs, and starts the run, " +
          'answering at once (the run goes on in a worker). A delivery whose event id was taken before is answered ' +
          'as the first was (with Webhook-Replayed: true), and starts nothing. A refused signature, a stale ' +
          'timestamp or an oversized body stores nothing but a count.',
        security: [],
        params: Type.Object({
          namespace: Type.String({ minLength: 1, maxLength: 200 }),
          name: Type.String({ minLength: 1, maxLength: 200 }),
        }),
        body: Type.Unsafe<unknown>({ description: "The sender's payload, a JSON document (verified over its bytes)" }),
        response: { 202: { $ref: 'HookAccepted#' } },
        ok: 'The delivery was verified and its run started',
        errors: [
          'api:hooks:not-found',
          'api:hooks:too-large',
          'api:hooks:signature-invalid',
          'api:hooks:timestamp-stale',
          'api:hooks:body-invalid',
          'api:hooks:event-id-missing',
          'api:hooks:inputs-refused',
          'api:quota:runs-exceeded',
          'api:quota:tool-calls-exceeded',
          'api:quota:tokens-exceeded',
        ],
        examples: {
          body: { id: 'evt_1QhZ2b', type: 'order.refund_requested', data: { order_id: 'A-1042', reason: 'damaged' } },
        },
      }),
    },
    async (request, typedReply) => {
      // A replay answers whatever status the first delivery was answered.
      const reply = typedReply as unknown as FastifyReply;
      const { namespace, name } = request.params;
      // Through the process's cache of versions and secrets, as a run start reads them.
      await ctx.cache.sync();
      const stored = await ctx.cache.findVersion<Trigger>(namespace, 'trigger', name);
      // A chaining trigger (`on`, no `verify`) takes no webhook: it has no URL.
      if (stored === undefined || !stored.enabled || !stored.resource.enabled || stored.resource.verify === undefined) {
        throw serverErrors.create('api:hooks:not-found', { namespace, name });
      }
      const { resource, version } = stored;
      const trigger = { ...resource, verify: resource.verify as NonNullable<Trigger['verify']> };
      const interactionVersion = stored.pins.find((pin) => pin.kind === 'interaction')?.version ?? 1;
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      if (raw.length > trigger.maxBodyBytes) {
        await countTriggerRejection(ctx.db, namespace, name, 'size');
        throw serverErrors.create('api:hooks:too-large', { size: raw.length, max: trigger.maxBodyBytes, name });
      }
      const secret = await ctx.cache.readSecretValue(namespace, { name: trigger.verify.secret });
      const verdict =
        secret === undefined
          ? ({ ok: false, reason: 'signature', detail: 'the secret the trigger names is not there' } as const)
          : verifyDelivery(trigger.verify, secret.value, raw, request.headers);
      if (!verdict.ok) {
        await countTriggerRejection(ctx.db, namespace, name, verdict.reason);
        if (verdict.reason === 'timestamp')
          throw serverErrors.create('api:hooks:timestamp-stale', { detail: verdict.detail });
        throw serverErrors.create('api:hooks:signature-invalid', {
          detail: verdict.detail,
          style: trigger.verify.style,
        });
      }
      let payload: unknown;
      try {
        payload = JSON.parse(raw.toString('utf8'));
      } catch (error) {
        throw serverErrors.create('api:hooks:body-invalid', { detail: (error as Error).message });
      }
      const pointer = trigger.eventId ?? (trigger.verify.style === 'stripe' ? '/id' : undefined);
      const fromBody = pointer === undefined ? undefined : pointerValue(payload, pointer);
      const eventId =
        pointer === undefined
          ? verdict.eventId
          : typeof fromBody === 'string' || typeof fromBody === 'number'
            ? String(fromBody)
            : undefined;
      if (eventId === undefined || eventId === '' || eventId.length > EVENT_ID_MAX) {
        throw serverErrors.create('api:hooks:event-id-missing', {
          where: pointer === undefined ? `the ${trigger.verify.style} style's id header` : `the payload at ${pointer}`,
        });
      }
      const replay = async () => {
        const first = await findDelivery(ctx.db, namespace, name, eventId);
        if (first === undefined) return undefined;
        return reply
          .status(first.answerStatus ?? 200)
          .header('webhook-replayed', 'true')
          .send(first.answer);
      };

      const inputs: Record<string, unknown> = {};
      for (const [input, mapping] of Object.entries(trigger.inputs)) {
        const value = pointerValue(payload, mapping.pointer);
        if (value !== undefined) inputs[input] = value;
        else if (mapping.default !== undefined) inputs[input] = mapping.default;
      }
      const refuse = async (detail: string) => {
        const error = serverErrors.create('api:hooks:inputs-refused', { detail });
        const body = errorBody(error);
        const stored = await recordDelivery(ctx.db, namespace, name, {
          eventId,
          version,
          status: 'refused',
          runId: null,
          detail,
          answerStatus: error.status,
          answer: body,
        });
        if (!stored) return (await replay()) ?? reply.status(error.status).send(body);
        return reply.status(error.status).send(body);
      };
      try {
        let accepted: { eventId: string; status: 'started'; runId: string } | undefined;
        await ctx.engine.startRun(
          namespace,
          trigger.interaction,
          { inputs, interactive: false, version: interactionVersion },
          undefined,
          {
            origin: { kind: 'trigger', name, version, eventId },
            claim: async (tx, runId) => {
              accepted = { eventId, status: 'started', runId };
              return recordDelivery(tx, namespace, name, {
                eventId,
                version,
                status: 'started',
                runId,
                detail: null,
                answerStatus: 202,
                answer: accepted,
              });
            },
          },
        );
        return reply.status(202).send(accepted);
      } catch (error) {
        // Another delivery of the same event id took it (before, or meanwhile): answered as it was. A replay is
        // answered from the first's row also when its start would fail now (its interaction version disabled since).
        const first = await replay();
        if (first !== undefined) return first;
        if (error instanceof StartDeclined) throw error;
        // The payload did not give what the interaction needs: the delivery is refused, and logged so.
        if (
          (isMtError(error) && error.code.startsWith('api:interactions:input')) ||
          (isMtError(error) && error.code === 'api:runs:input-too-large')
        ) {
          return refuse(error.message);
        }
        throw error;
      }
    },
  );
}

/** `GET /v1/triggers/{name}/deliveries`: a trigger's delivery log and its counted rejections. */
export async function triggerRoutes(app: Api, ctx: ServerContext): Promise<void> {
  deleteRoute(app, ctx, {
    kind: 'trigger',
    path: '/triggers',
    tag: 'hooks',
    noun: 'Trigger',
    one: 'trigger',
    notFound: 'api:hooks:not-found',
    notFoundError: (namespace: string) => (name: string) =>
      serverErrors.create('api:hooks:not-found', { name, namespace }),
  });
  app.get(
    '/triggers/:name/deliveries',
    {
      schema: operation({
        operationId: 'listTriggerDeliveries',
        tags: ['hooks'],
        summary: "A trigger's latest deliveries, and the count of those refused before anything was stored",
        description:
          'The delivery log of a trigger: each delivery recorded (newest first), the run it started or why (with ' +
          "the code) it was refused, and the status it was answered (an inbound webhook's); and the deliveries " +
          'refused for their signature, timestamp or size, counted by reason (nothing else of them is kept). A ' +
          "chaining trigger's delivery is one ended run (its event id the run's id), pending until its run starts.",
        params: NameParamsSchema,
        querystring: ListScheduleTicksQuerySchema,
        response: { 200: { $ref: 'TriggerDeliveryLog#' } },
        ok: 'The latest deliveries (at most `limit`, default 50) and the rejections',
        errors: ['api:hooks:not-found'],
      }),
    },
    async (request) => {
      const { namespace } = request.identity;
      const { name } = request.params;
      if ((await latestTrigger(ctx.db, namespace, name)) === undefined) {
        throw serverErrors.create('api:hooks:not-found', { namespace, name });
      }
      const deliveries = (await listDeliveries(ctx.db, namespace, name, request.query.limit ?? 50)).map(
        ({ answer: _answer, ...delivery }) => delivery,
      );
      return { deliveries, rejected: await triggerRejections(ctx.db, namespace, name) };
    },
  );
}
