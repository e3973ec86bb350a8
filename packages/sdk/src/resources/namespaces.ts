import type { RequestOptions } from '../client.js';
import type { CreatedNamespace, CreateNamespaceParams } from '../types.js';
import { APIResource } from './resource.js';

/** `mt.namespaces`: creating namespaces (operator keys only: the admin keys of `default`). */
export class Namespaces extends APIResource {
  /** Creates a namespace and its first admin key, shown this once. */
  async create(params: CreateNamespaceParams, options?: RequestOptions): Promise<CreatedNamespace> {
    return this.client.request({ method: 'POST', path: '/v1/namespaces', body: params }, options);
  }
}
