// Outbound webhooks (docs/notifications.md), declared once like ./connections.ts: the answers (with an `$id`,
// published as components) and what requests carry (inline in their operations). An endpoint's signing secret is
// answered only by the create and the rotation, once.
import { type Static, Type } from 'typebox';
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_EVENT_TYPES } from './constants.js';
import { timestamp, uuid } from './formats.js';
import { ref, stringEnum } from './schemas.js';

const url = Type.String({
  minLength: 1,
  maxLength: 2000,
  description:
    'Where deliveries are POSTed: an http or https URL the egress rules allow (public addresses unless MT_EGRESS_ALLOW lets a private one through)',
});
const events = Type.Array(stringEnum(WEBHOOK_EVENT_TYPES.filter((type) => type !== 'webhook.test')), {
  maxItems: 20,
  uniqueItems: true,
  description: 'The event types it receives; empty or absent: every type',
});
const description = Type.Union([Type.String({ maxLength: 500 }), Type.Null()], {
  description: 'What it is for (shown in lists)',
});

/** An endpoint of the namespace: its URL and events, never its secret. */
export const WebhookEndpointSchema = Type.Object(
  {
    id: uuid(),
    url: Type.String(),
    events: Type.Array(Type.String(), { description: 'The event types it receives; empty: every type' }),
    description,
    enabled: Type.Boolean({ description: 'False: no event is written for it (a test event still is)' }),
    previousSecretUntil: Type.Union([timestamp(), Type.Null()], {
      description: "Until when the previous secret signs every delivery too (a rotation's grace); null: none",
    }),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  },
  { $id: 'WebhookEndpoint', description: 'An outbound webhook endpoint (never its signing secret)' },
);

/** An endpoint as made or rotated: with its signing secret, shown this once. */
export const WebhookEndpointWithSecretSchema = Type.Object(
  {
    endpoint: ref(WebhookEndpointSchema),
    secret: Type.String({
      description:
        'The signing secret (whsec_ and base64), shown this once: give it to the receiver, which verifies each delivery with a Standard Webhooks library',
    }),
  },
  { $id: 'WebhookEndpointWithSecret' },
);

/** One event for one endpoint, and how its delivery went. */
export const WebhookDeliverySchema = Type.Object(
  {
    id: uuid(),
    messageId: Type.String({ description: 'The webhook-id header of every attempt: msg_ and the id without dashes' }),
    endpointId: uuid(),
    eventType: Type.String(),
    status: stringEnum(WEBHOOK_DELIVERY_STATUSES),
    attempts: Type.Integer({ description: 'Attempts made so far' }),
    nextAttemptAt: Type.Union([timestamp(), Type.Null()], {
      description: 'When it is sent (again); null once Delivered or Failed',
    }),
    lastStatus: Type.Union([Type.Integer(), Type.Null()], {
      description: "The HTTP status of the last attempt's answer (null: none came)",
    }),
    lastError: Type.Union([Type.String(), Type.Null()], { description: 'Why the last attempt failed' }),
    createdAt: timestamp(),
    deliveredAt: Type.Union([timestamp(), Type.Null()]),
  },
  { $id: 'WebhookDelivery' },
);

/** The body of `POST /v1/webhooks`. */
export const CreateWebhookBodySchema = Type.Object(
  {
    url,
    events: Type.Optional(events),
    description: Type.Optional(description),
    enabled: Type.Optional(Type.Boolean({ description: 'Default true' })),
  },
  { additionalProperties: false },
);

/** The body of `PUT /v1/webhooks/{id}`: what changes. */
export const UpdateWebhookBodySchema = Type.Object(
  {
    url: Type.Optional(url),
    events: Type.Optional(events),
    description: Type.Optional(description),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** The body of `POST /v1/webhooks/{id}/rotate-secret`. */
export const RotateWebhookSecretBodySchema = Type.Object(
  {
    graceSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 30 * 86_400,
        description:
          'How long the old secret signs every delivery too (a second signature), so receivers can switch: default 86400 (a day); 0 ends it now',
      }),
    ),
  },
  { additionalProperties: false },
);

/** The query of `GET /v1/webhooks/{id}/deliveries`. */
export const ListWebhookDeliveriesQuerySchema = Type.Object(
  {
    status: Type.Optional(stringEnum(WEBHOOK_DELIVERY_STATUSES)),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'Default 50' })),
  },
  { additionalProperties: false },
);

export type WebhookEndpoint = Static<typeof WebhookEndpointSchema>;
export type WebhookEndpointWithSecret = Static<typeof WebhookEndpointWithSecretSchema>;
export type WebhookDelivery = Static<typeof WebhookDeliverySchema>;
export type CreateWebhookParams = Static<typeof CreateWebhookBodySchema>;
export type UpdateWebhookParams = Static<typeof UpdateWebhookBodySchema>;
export type RotateWebhookSecretParams = Static<typeof RotateWebhookSecretBodySchema>;
export type ListWebhookDeliveriesParams = Static<typeof ListWebhookDeliveriesQuerySchema>;

/** The schemas of webhooks with an `$id`, in the order a server adds them. */
export const webhookWireSchemas = [
  WebhookEndpointSchema,
  WebhookEndpointWithSecretSchema,
  WebhookDeliverySchema,
] as const;
