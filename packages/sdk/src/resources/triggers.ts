import type { RequestOptions } from '../client.js';
import { path } from '../core/path.js';
import type { TriggerDeliveryLog } from '../wire/schedules.js';
import { APIResource } from './resource.js';

/** `mt.triggers`: the inbound webhooks' delivery logs. */
export class Triggers extends APIResource {
  /**
   * A trigger's latest deliveries (newest first, at most `limit`, default 50): the run each started or why it was
   * refused; and the deliveries refused before anything was stored, counted by reason.
   */
  async deliveries(
    name: string,
    params: { limit?: number } = {},
    options?: RequestOptions,
  ): Promise<TriggerDeliveryLog> {
    const query = params.limit === undefined ? '' : `?limit=${encodeURIComponent(String(params.limit))}`;
    return this.client.request({ method: 'GET', path: `${path`/v1/triggers/${name}/deliveries`}${query}` }, options);
  }

  /**
   * Deletes the trigger (an admin key): no longer listed, found or started. Refused with `api:resources:pinned`
   * (naming the run) while a run not yet ended pins it, and `api:resources:referenced` while another resource pins it.
   */
  async delete(name: string, options?: RequestOptions): Promise<void> {
    await this.client.request({ method: 'DELETE', path: path`/v1/triggers/${name}` }, options);
  }
}
