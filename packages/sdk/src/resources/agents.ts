import type { RequestOptions } from '../client.js';
import { path } from '../core/path.js';
import type { AgentRecord, ResourceSummary, VersionInfo } from '../types.js';
import { APIResource } from './resource.js';

/** `mt.agents`: the deployed agents (model, instructions, tools) and their versions. */
export class Agents extends APIResource {
  /** Every agent of the namespace with its latest version. */
  async list(options?: RequestOptions): Promise<ResourceSummary[]> {
    return this.client.request({ method: 'GET', path: '/v1/agents' }, options);
  }

  /** The latest version of an agent, or the version named. */
  async get(name: string, params: { version?: number } = {}, options?: RequestOptions): Promise<AgentRecord> {
    const route =
      params.version === undefined ? path`/v1/agents/${name}` : path`/v1/agents/${name}/versions/${params.version}`;
    return this.client.request({ method: 'GET', path: route }, options);
  }

  /** Every stored version of an agent, newest first. */
  async versions(name: string, options?: RequestOptions): Promise<VersionInfo[]> {
    return this.client.request({ method: 'GET', path: path`/v1/agents/${name}/versions` }, options);
  }

  /**
   * Deletes the agent (an admin key): no longer listed, found or started. Refused with `api:resources:pinned`
   * (naming the run) while a run not yet ended pins it, and `api:resources:referenced` while another resource pins it.
   */
  async delete(name: string, options?: RequestOptions): Promise<void> {
    await this.client.request({ method: 'DELETE', path: path`/v1/agents/${name}` }, options);
  }
}
