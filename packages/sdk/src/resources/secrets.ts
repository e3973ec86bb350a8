import type { RequestOptions } from '../client.js';
import { path } from '../core/path.js';
import type { SecretInfo } from '../types.js';
import { APIResource } from './resource.js';

/** `mt.secrets`: values tools send as credentials; the API never returns a value. */
export class Secrets extends APIResource {
  /** Stores a new secret. */
  async create(params: { name: string; value: string }, options?: RequestOptions): Promise<SecretInfo> {
    return this.client.request({ method: 'POST', path: '/v1/secrets', body: params }, options);
  }

  /** Every secret of the namespace, by id and name. */
  async list(options?: RequestOptions): Promise<SecretInfo[]> {
    return this.client.request({ method: 'GET', path: '/v1/secrets' }, options);
  }

  /** Replaces the value of the secret with id `id`. */
  async rotate(id: string, params: { value: string }, options?: RequestOptions): Promise<SecretInfo> {
    return this.client.request({ method: 'PUT', path: path`/v1/secrets/${id}`, body: params }, options);
  }

  /** Deletes the secret with id `id`. */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    await this.client.request({ method: 'DELETE', path: path`/v1/secrets/${id}` }, options);
  }
}
