import type { RequestOptions } from '../client.js';
import { path } from '../core/path.js';
import type { CreatedKey, CreateKeyParams, KeyInfo } from '../types.js';
import { APIResource } from './resource.js';

/** `mt.keys`: the API keys of the namespace. */
export class Keys extends APIResource {
  /** Creates a key; the answer's `key` is shown this once. */
  async create(params: CreateKeyParams, options?: RequestOptions): Promise<CreatedKey> {
    return this.client.request({ method: 'POST', path: '/v1/keys', body: params }, options);
  }

  /** Every key of the namespace, without the keys themselves. */
  async list(options?: RequestOptions): Promise<KeyInfo[]> {
    return this.client.request({ method: 'GET', path: '/v1/keys' }, options);
  }

  /** Deletes (revokes) the key with id `id`. */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    await this.client.request({ method: 'DELETE', path: path`/v1/keys/${id}` }, options);
  }
}
