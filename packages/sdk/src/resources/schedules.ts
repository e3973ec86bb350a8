import type { RequestOptions } from '../client.js';
import { path } from '../core/path.js';
import type { ScheduleState, ScheduleTick } from '../wire/schedules.js';
import { APIResource } from './resource.js';

/** `mt.schedules`: the deployed schedules with their last and next ticks, pause and resume, and their history. */
export class Schedules extends APIResource {
  /** Every schedule of the namespace (its latest enabled version) with its last and next ticks. */
  async list(options?: RequestOptions): Promise<ScheduleState[]> {
    return this.client.request({ method: 'GET', path: '/v1/schedules' }, options);
  }

  /** One schedule as it stands. */
  async get(name: string, options?: RequestOptions): Promise<ScheduleState> {
    return this.client.request({ method: 'GET', path: path`/v1/schedules/${name}` }, options);
  }

  /** Pauses a schedule in every process: no tick starts a run until it is resumed (an admin key). */
  async pause(name: string, params: { reason?: string } = {}, options?: RequestOptions): Promise<ScheduleState> {
    return this.client.request({ method: 'POST', path: path`/v1/schedules/${name}/pause`, body: params }, options);
  }

  /** Resumes a schedule: the ticks while it was paused are not made up for (an admin key). */
  async resume(name: string, params: { reason?: string } = {}, options?: RequestOptions): Promise<ScheduleState> {
    return this.client.request({ method: 'POST', path: path`/v1/schedules/${name}/resume`, body: params }, options);
  }

  /** The latest ticks of a schedule, newest first (at most `limit`, default 50), and what became of each. */
  async ticks(name: string, params: { limit?: number } = {}, options?: RequestOptions): Promise<ScheduleTick[]> {
    const query = params.limit === undefined ? '' : `?limit=${encodeURIComponent(String(params.limit))}`;
    return this.client.request({ method: 'GET', path: `${path`/v1/schedules/${name}/ticks`}${query}` }, options);
  }

  /**
   * Deletes the schedule (an admin key): no longer listed, found or started. Refused with `api:resources:pinned`
   * (naming the run) while a run not yet ended pins it, and `api:resources:referenced` while another resource pins it.
   */
  async delete(name: string, options?: RequestOptions): Promise<void> {
    await this.client.request({ method: 'DELETE', path: path`/v1/schedules/${name}` }, options);
  }
}
