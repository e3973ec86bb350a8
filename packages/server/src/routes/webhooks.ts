import { checkUrlStatically } from '@maitento/egress';
import {
  CreateWebhookBodySchema,
  IdParamsSchema,
  ListWebhookDeliveriesQuerySchema,
  RotateWebhookSecretBodySchema,
  UpdateWebhookBodySchema,
} from '@maitento/sdk';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  enqueueWebhookTest,
  getWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  recordAudit,
  rotateWebhookSecret,
  updateWebhookEndpoint,
  type WebhookEndpoint,
} from '@maitento/store';
import { serverErrors } from '../errors.js';
import { auditContext } from '../http/actor.js';
import { emptyBodyIsEmptyObject } from '../http/optional-body.js';
import { operation } from '../openapi/operation.js';
import { bindAnswer, sendBound } from '../plugins/idempotency.js';
import type { Api } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';

/** A rotation's grace when none is given: a day. */
export const DEFAULT_WEBHOOK_GRACE_SECONDS = 86_400;

// What the audit log keeps of an endpoint: never its secret.
const summary = (endpoint: WebhookEndpoint) => ({
  url: endpoint.url,
  events: endpoint.events,
  enabled: endpoint.enabled,
});

/**
 * `/v1/webhooks` (docs/notifications.md): an admin manages the namespace's outbound webhook endpoints (their URL,
 * events and signing secret, shown once at creation and rotation), sends a test event and reads each one's deliveries.
 */
export async function webhookRoutes(app: Api, ctx: ServerContext): Promise<void> {
  // The tools' address rules, checked when the URL is stored (every delivery is checked again when it connects).
  const checkUrl = (text: string) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw serverErrors.create('api:webhooks:url-refused', { url: text, reason: 'it is not a URL' });
    }
    const verdict = checkUrlStatically(url, ctx.egress);
    if (!verdict.ok) throw serverErrors.create('api:webhooks:url-refused', { url: text, reason: verdict.reason });
  };

  app.post(
    '/webhooks',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'createWebhook',
        tags: ['webhooks'],
        summary: 'Create a webhook endpoint (its signing secret shown once)',
        description:
          'Adds an endpoint that receives the events of the namespace it asks for (approval.requested, ' +
          'approval.answered, approval.expired, run.waiting, run.completed, run.failed, authorization.requested; none: ' +
          'every one), each POSTed as JSON and signed per Standard Webhooks (webhook-id, webhook-timestamp, ' +
          'webhook-signature). The answer holds the signing secret, which is never answered again.',
        body: CreateWebhookBodySchema,
        response: { 201: { $ref: 'WebhookEndpointWithSecret#' } },
        ok: 'The endpoint and its signing secret (shown this once)',
        errors: ['api:webhooks:url-refused'],
        examples: { body: { url: 'https://hooks.example.com/maitento', events: ['approval.requested'] } },
      }),
    },
    async (request, reply) => {
      const { namespace } = request.identity;
      checkUrl(request.body.url);
      const body = await ctx.db.transaction(async (tx) => {
        const made = await createWebhookEndpoint(tx, ctx.secretKey, namespace, {
          url: request.body.url,
          events: request.body.events ?? [],
          ...(request.body.description === undefined ? {} : { description: request.body.description }),
          ...(request.body.enabled === undefined ? {} : { enabled: request.body.enabled }),
        });
        await recordAudit(tx, {
          ...auditContext(request),
          namespace,
          action: 'webhook.created',
          target: { kind: 'webhook', id: made.endpoint.id },
          after: summary(made.endpoint),
        });
        return bindAnswer(tx, reply, 201, made);
      });
      return sendBound(reply, body);
    },
  );

  app.get(
    '/webhooks',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'listWebhooks',
        tags: ['webhooks'],
        summary: 'List the webhook endpoints',
        description: 'Lists the webhook endpoints of the namespace, oldest first (never their secrets).',
        response: { 200: { type: 'array', items: { $ref: 'WebhookEndpoint#' } } },
        ok: 'The endpoints',
        errors: [],
      }),
    },
    async (request) => listWebhookEndpoints(ctx.db, request.identity.namespace),
  );

  app.get(
    '/webhooks/:id',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'getWebhook',
        tags: ['webhooks'],
        summary: 'Read a webhook endpoint',
        description: 'Reads one webhook endpoint: its URL, events, whether it is enabled and its rotation grace.',
        params: IdParamsSchema,
        response: { 200: { $ref: 'WebhookEndpoint#' } },
        ok: 'The endpoint',
        errors: ['api:webhooks:not-found'],
      }),
    },
    async (request) => getWebhookEndpoint(ctx.db, request.identity.namespace, request.params.id),
  );

  app.put(
    '/webhooks/:id',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'updateWebhook',
        tags: ['webhooks'],
        summary: 'Change a webhook endpoint',
        description:
          'Changes what is given of an endpoint: its URL, events, description, or enabled (a disabled endpoint gets ' +
          'no event written for it; its pending deliveries wait until it is enabled again).',
        params: IdParamsSchema,
        body: UpdateWebhookBodySchema,
        response: { 200: { $ref: 'WebhookEndpoint#' } },
        ok: 'The endpoint as changed',
        errors: ['api:webhooks:not-found', 'api:webhooks:url-refused'],
        examples: { body: { enabled: false } },
      }),
    },
    async (request) => {
      const { namespace } = request.identity;
      if (request.body.url !== undefined) checkUrl(request.body.url);
      return ctx.db.transaction(async (tx) => {
        const { before, after } = await updateWebhookEndpoint(tx, namespace, request.params.id, request.body);
        await recordAudit(tx, {
          ...auditContext(request),
          namespace,
          action: 'webhook.updated',
          target: { kind: 'webhook', id: after.id },
          before: summary(before),
          after: summary(after),
        });
        return after;
      });
    },
  );

  app.delete(
    '/webhooks/:id',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'deleteWebhook',
        tags: ['webhooks'],
        summary: 'Delete a webhook endpoint',
        description: 'Deletes an endpoint with its delivery log; its pending deliveries are not sent.',
        params: IdParamsSchema,
        response: { 204: { type: 'null' } },
        ok: 'The endpoint was deleted',
        errors: ['api:webhooks:not-found'],
      }),
    },
    async (request, reply) => {
      const { namespace } = request.identity;
      await ctx.db.transaction(async (tx) => {
        const gone = await deleteWebhookEndpoint(tx, namespace, request.params.id);
        await recordAudit(tx, {
          ...auditContext(request),
          namespace,
          action: 'webhook.deleted',
          target: { kind: 'webhook', id: gone.id },
          before: summary(gone),
        });
      });
      return reply.status(204).send();
    },
  );

  app.post(
    '/webhooks/:id/rotate-secret',
    {
      config: { role: 'admin' },
      preValidation: emptyBodyIsEmptyObject,
      schema: operation({
        operationId: 'rotateWebhookSecret',
        tags: ['webhooks'],
        summary: "Rotate a webhook endpoint's signing secret (the new one shown once)",
        description:
          'Gives the endpoint a new signing secret. For graceSeconds (default a day) every delivery carries two ' +
          'signatures, by the new secret and by the old, so the receiver can switch without losing one; 0 drops the ' +
          'old one now.',
        params: IdParamsSchema,
        body: RotateWebhookSecretBodySchema,
        response: { 200: { $ref: 'WebhookEndpointWithSecret#' } },
        ok: 'The endpoint and its new signing secret (shown this once)',
        errors: ['api:webhooks:not-found'],
        examples: { body: { graceSeconds: 3600 } },
      }),
    },
    async (request, reply) => {
      const { namespace } = request.identity;
      const grace = request.body?.graceSeconds ?? DEFAULT_WEBHOOK_GRACE_SECONDS;
      const body = await ctx.db.transaction(async (tx) => {
        const rotated = await rotateWebhookSecret(tx, ctx.secretKey, namespace, request.params.id, grace);
        await recordAudit(tx, {
          ...auditContext(request),
          namespace,
          action: 'webhook.secret-rotated',
          target: { kind: 'webhook', id: rotated.endpoint.id },
          after: { graceSeconds: grace, previousSecretUntil: rotated.endpoint.previousSecretUntil },
        });
        return bindAnswer(tx, reply, 200, rotated);
      });
      return sendBound(reply, body);
    },
  );

  app.post(
    '/webhooks/:id/test',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'testWebhook',
        tags: ['webhooks'],
        summary: 'Send a test event to a webhook endpoint',
        description:
          'Writes a webhook.test delivery for the endpoint (enabled or not), sent like any other: signed, retried, ' +
          'logged. Follow it with GET /v1/webhooks/{id}/deliveries.',
        params: IdParamsSchema,
        response: { 202: { $ref: 'WebhookDelivery#' } },
        ok: 'The delivery, pending',
        errors: ['api:webhooks:not-found'],
      }),
    },
    async (request, reply) => {
      const delivery = await enqueueWebhookTest(ctx.db, request.identity.namespace, request.params.id);
      return reply.status(202).send(delivery);
    },
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'listWebhookDeliveries',
        tags: ['webhooks'],
        summary: "A webhook endpoint's delivery log, newest first",
        description:
          'Lists the deliveries of an endpoint, newest first: each event, its status (Pending, Delivered, Failed), ' +
          'attempts, the last answer or error and when it is sent again.',
        params: IdParamsSchema,
        querystring: ListWebhookDeliveriesQuerySchema,
        response: { 200: { type: 'array', items: { $ref: 'WebhookDelivery#' } } },
        ok: 'The deliveries',
        errors: ['api:webhooks:not-found'],
      }),
    },
    async (request) =>
      listWebhookDeliveries(ctx.db, request.identity.namespace, request.params.id, {
        ...(request.query.status === undefined ? {} : { status: request.query.status }),
        limit: request.query.limit ?? 50,
      }),
  );
}
