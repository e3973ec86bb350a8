import type { RequestOptions } from '../client.js';
import { path } from '../core/path.js';
import type { AuthProviderRecord, ResourceSummary, VersionInfo, VersionState } from '../types.js';
import { APIResource } from './resource.js';

/** `mt.authProviders`: the deployed OAuth 2 authorization servers end users connect at, and their versions. */
export class AuthProviders extends APIResource {
  /** Every auth provider of the namespace with its latest version. */
  async list(options?: RequestOptions): Promise<ResourceSummary[]> {
    return this.client.request({ method: 'GET', path: '/v1/auth-providers' }, options);
  }

  /** The latest version of an auth provider, or the version named. */
  async get(name: string, params: { version?: number } = {}, options?: RequestOptions): Promise<AuthProviderRecord> {
    const route =
      params.version === undefined
        ? path`/v1/auth-providers/${name}`
        : path`/v1/auth-providers/${name}/versions/${params.version}`;
    return this.client.request({ method: 'GET', path: route }, options);
  }

  /** Every stored version of an auth provider. */
  async versions(name: string, options?: RequestOptions): Promise<VersionInfo[]> {
    return this.client.request({ method: 'GET', path: path`/v1/auth-providers/${name}/versions` }, options);
  }

  /** Disables one version: no connect link is made with it until it is enabled again. */
  async disableVersion(name: string, version: number, options?: RequestOptions): Promise<VersionState> {
    return this.client.request(
      { method: 'POST', path: path`/v1/auth-providers/${name}/versions/${version}/disable` },
      options,
    );
  }

  /** Enables one version again. */
  async enableVersion(name: string, version: number, options?: RequestOptions): Promise<VersionState> {
    return this.client.request(
      { method: 'POST', path: path`/v1/auth-providers/${name}/versions/${version}/enable` },
      options,
    );
  }

  /**
   * Deletes the auth provider (an admin key): no longer listed, found or started. Refused with `api:resources:pinned`
   * (naming the run) while a run not yet ended pins it, and `api:resources:referenced` while another resource pins it.
   */
  async delete(name: string, options?: RequestOptions): Promise<void> {
    await this.client.request({ method: 'DELETE', path: path`/v1/auth-providers/${name}` }, options);
  }
}
