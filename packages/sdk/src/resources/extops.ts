import type { Static } from 'typebox';
import type { RequestOptions } from '../client.js';
import { path } from '../core/path.js';
import type { ExtopCallResult, ExtopRecord, ExtopSummary, VersionInfo, VersionState } from '../types.js';
import type { ExtopCallBodySchema } from '../wire/requests.js';
import { APIResource } from './resource.js';

/** The least time a call by hand is given: the gateway's 100 s deadline and some room. */
const CALL_TIMEOUT_MS = 110_000;

/**
 * Parameters of {@link Extops.call}: the model's `arguments` (`{ request?, additionalInputs? }`), a
 * `version` to call instead of the latest, and the `endUser` an OAuth2 connector's call acts for (without a usable
 * connection the call is refused with a `ConflictError` whose `authorization.url` is their connect link).
 */
export type ExtopCallParams = Static<typeof ExtopCallBodySchema>;

/** `mt.extops`: the deployed tools (external operations), their versions, and one call by hand. */
export class Extops extends APIResource {
  /** Every tool of the namespace with its latest version and whether it can be called. */
  async list(options?: RequestOptions): Promise<ExtopSummary[]> {
    return this.client.request({ method: 'GET', path: '/v1/extops' }, options);
  }

  /** The latest version of a tool (or the version named) with its model-facing definition. */
  async get(name: string, params: { version?: number } = {}, options?: RequestOptions): Promise<ExtopRecord> {
    const route =
      params.version === undefined ? path`/v1/extops/${name}` : path`/v1/extops/${name}/versions/${params.version}`;
    return this.client.request({ method: 'GET', path: route }, options);
  }

  /** Every stored version of a tool. */
  async versions(name: string, options?: RequestOptions): Promise<VersionInfo[]> {
    return this.client.request({ method: 'GET', path: path`/v1/extops/${name}/versions` }, options);
  }

  /** Disables one version: every call pinned to it fails until it is enabled again. */
  async disableVersion(name: string, version: number, options?: RequestOptions): Promise<VersionState> {
    return this.client.request({ method: 'POST', path: path`/v1/extops/${name}/versions/${version}/disable` }, options);
  }

  /** Enables one version again. */
  async enableVersion(name: string, version: number, options?: RequestOptions): Promise<VersionState> {
    return this.client.request({ method: 'POST', path: path`/v1/extops/${name}/versions/${version}/enable` }, options);
  }

  /** Makes one call of the tool through the server's gateway with the namespace's secrets. */
  async call(name: string, params: ExtopCallParams, options: RequestOptions = {}): Promise<ExtopCallResult> {
    // The server's gateway may wait up to 100 s for the upstream: giving up sooner would retry a call that is
    // still under way. A retry carries the same Idempotency-Key, which the server hands on to the upstream.
    const timeoutMs = Math.max(options.timeoutMs ?? this.client.timeoutMs, CALL_TIMEOUT_MS);
    return this.client.request(
      { method: 'POST', path: path`/v1/extops/${name}/call`, body: params },
      { ...options, timeoutMs },
    );
  }

  /**
   * Deletes the tool (an admin key): no longer listed, found or started. Refused with `api:resources:pinned`
   * (naming the run) while a run not yet ended pins it, and `api:resources:referenced` while another resource pins it.
   */
  async delete(name: string, options?: RequestOptions): Promise<void> {
    await this.client.request({ method: 'DELETE', path: path`/v1/extops/${name}` }, options);
  }
}
