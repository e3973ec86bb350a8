import type { RequestOptions } from '../client.js';
import { path } from '../core/path.js';
import type {
  CreateWebhookParams,
  ListWebhookDeliveriesParams,
  RotateWebhookSecretParams,
  UpdateWebhookParams,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from '../wire/webhooks.js';
import { APIResource } from './resource.js';

export type {
  CreateWebhookParams,
  ListWebhookDeliveriesParams,
  RotateWebhookSecretParams,
  UpdateWebhookParams,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
};

/**
 * `mt.webhooks`: the namespace's outbound webhook endpoints (an admin key; docs/notifications.md). Each delivery is
 * signed per Standard Webhooks with the endpoint's secret, answered only by `create` and `rotateSecret`.
 */
export class Webhooks extends APIResource {
  /** Adds an endpoint for `events` (none: every event); the answer holds its signing secret, shown this once. */
  async create(params: CreateWebhookParams, options?: RequestOptions): Promise<WebhookEndpointWithSecret> {
    return this.client.request({ method: 'POST', path: '/v1/webhooks', body: params }, options);
  }

  /** Every endpoint of the namespace (never a secret). */
  async list(options?: RequestOptions): Promise<WebhookEndpoint[]> {
    return this.client.request({ method: 'GET', path: '/v1/webhooks' }, options);
  }

  /** One endpoint. */
  async get(id: string, options?: RequestOptions): Promise<WebhookEndpoint> {
    return this.client.request({ method: 'GET', path: path`/v1/webhooks/${id}` }, options);
  }

  /** Changes what is given: URL, events, description, enabled. */
  async update(id: string, params: UpdateWebhookParams, options?: RequestOptions): Promise<WebhookEndpoint> {
    return this.client.request({ method: 'PUT', path: path`/v1/webhooks/${id}`, body: params }, options);
  }

  /** Deletes an endpoint and its delivery log. */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    await this.client.request({ method: 'DELETE', path: path`/v1/webhooks/${id}` }, options);
  }

  /** A new signing secret; the old one signs too for `graceSeconds` (default a day). */
  async rotateSecret(
    id: string,
    params: RotateWebhookSecretParams = {},
    options?: RequestOptions,
  ): Promise<WebhookEndpointWithSecret> {
    return this.client.request({ method: 'POST', path: path`/v1/webhooks/${id}/rotate-secret`, body: params }, options);
  }

  /** Sends a `webhook.test` event to the endpoint; resolves with its delivery, pending. */
  async test(id: string, options?: RequestOptions): Promise<WebhookDelivery> {
    return this.client.request({ method: 'POST', path: path`/v1/webhooks/${id}/test` }, options);
  }

  /** The endpoint's delivery log, newest first. */
  async deliveries(
    id: string,
    params: ListWebhookDeliveriesParams = {},
    options?: RequestOptions,
  ): Promise<WebhookDelivery[]> {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) if (value !== undefined) query.set(key, String(value));
    const text = query.toString();
    return this.client.request(
      { method: 'GET', path: `${path`/v1/webhooks/${id}/deliveries`}${text ? `?${text}` : ''}` },
      options,
    );
  }
}
