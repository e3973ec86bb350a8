import type { RequestOptions } from '../client.js';
import type { CreatedNamespace, CreateNamespaceParams } from '../types.js';
import { APIResource } from './resource.js';
import type { QuotaStanding, SetQuotasParams } from './usage.js';

/** `mt.namespaces`: creating namespaces and setting their quotas (operator keys only: the admin keys of `default`). */
export class Namespaces extends APIResource {
  /** Creates a namespace and its first admin key, shown this once. */
  async create(params: CreateNamespaceParams, options?: RequestOptions): Promise<CreatedNamespace> {
    return this.client.request({ method: 'POST', path: '/v1/namespaces', body: params }, options);
  }

  /** Sets every quota of namespace `name` (one left out is none); resolves with them and the figures now. */
  async setQuotas(name: string, params: SetQuotasParams, options?: RequestOptions): Promise<QuotaStanding> {
    return this.client.request(
      { method: 'PUT', path: `/v1/namespaces/${encodeURIComponent(name)}/quotas`, body: params },
      options,
    );
  }

  /** The quotas of namespace `name` and what it used of them. */
  async getQuotas(name: string, options?: RequestOptions): Promise<QuotaStanding> {
    return this.client.request({ method: 'GET', path: `/v1/namespaces/${encodeURIComponent(name)}/quotas` }, options);
  }
}
