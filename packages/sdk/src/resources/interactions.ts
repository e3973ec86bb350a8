import type { RequestOptions } from '../client.js';
import { path } from '../core/path.js';
import type { InteractionRecord, ResourceSummary, VersionInfo } from '../types.js';
import { APIResource } from './resource.js';

/** `mt.interactions`: the deployed interactions, their inputs and versions. Runs are `mt.interactionRuns`. */
export class Interactions extends APIResource {
  /** Every interaction of the namespace with its latest version. */
  async list(options?: RequestOptions): Promise<ResourceSummary[]> {
    return this.client.request({ method: 'GET', path: '/v1/interactions' }, options);
  }

  /** The latest version of an interaction (or the version named), with its inputs, agent and tools. */
  async get(name: string, params: { version?: number } = {}, options?: RequestOptions): Promise<InteractionRecord> {
    const route =
      params.version === undefined
        ? path`/v1/interactions/${name}`
        : path`/v1/interactions/${name}/versions/${params.version}`;
    return this.client.request({ method: 'GET', path: route }, options);
  }

  /** Every stored version of an interaction, newest first. */
  async versions(name: string, options?: RequestOptions): Promise<VersionInfo[]> {
    return this.client.request({ method: 'GET', path: path`/v1/interactions/${name}/versions` }, options);
  }

  /**
   * Deletes the interaction (an admin key): no longer listed, found or started. Refused with `api:resources:pinned`
   * (naming the run) while a run not yet ended pins it, and `api:resources:referenced` while another resource pins it.
   */
  async delete(name: string, options?: RequestOptions): Promise<void> {
    await this.client.request({ method: 'DELETE', path: path`/v1/interactions/${name}` }, options);
  }
}
