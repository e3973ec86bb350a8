import type { RequestOptions } from '../client.js';
import { path } from '../core/path.js';
import type { ConnectorRecord, ResourceSummary, VersionInfo, VersionState } from '../types.js';
import { APIResource } from './resource.js';

/** `mt.connectors`: the deployed HTTP endpoints and their versions. */
export class Connectors extends APIResource {
  /** Every connector of the namespace with its latest version. */
  async list(options?: RequestOptions): Promise<ResourceSummary[]> {
    return this.client.request({ method: 'GET', path: '/v1/connectors' }, options);
  }

  /** The latest version of a connector, or the version named. */
  async get(name: string, params: { version?: number } = {}, options?: RequestOptions): Promise<ConnectorRecord> {
    const route =
      params.version === undefined
        ? path`/v1/connectors/${name}`
        : path`/v1/connectors/${name}/versions/${params.version}`;
    return this.client.request({ method: 'GET', path: route }, options);
  }

  /** Every stored version of a connector. */
  async versions(name: string, options?: RequestOptions): Promise<VersionInfo[]> {
    return this.client.request({ method: 'GET', path: path`/v1/connectors/${name}/versions` }, options);
  }

  /** Disables one version: every call pinned to it fails until it is enabled again. */
  async disableVersion(name: string, version: number, options?: RequestOptions): Promise<VersionState> {
    return this.client.request(
      { method: 'POST', path: path`/v1/connectors/${name}/versions/${version}/disable` },
      options,
    );
  }

  /** Enables one version again. */
  async enableVersion(name: string, version: number, options?: RequestOptions): Promise<VersionState> {
    return this.client.request(
      { method: 'POST', path: path`/v1/connectors/${name}/versions/${version}/enable` },
      options,
    );
  }

  /**
   * Deletes the connector (an admin key): no longer listed, found or started. Refused with `api:resources:pinned`
   * (naming the run) while a run not yet ended pins it, and `api:resources:referenced` while another resource pins it.
   */
  async delete(name: string, options?: RequestOptions): Promise<void> {
    await this.client.request({ method: 'DELETE', path: path`/v1/connectors/${name}` }, options);
  }
}
