import type { RequestOptions } from '../client.js';
import { path } from '../core/path.js';
import type { ApprovalAnswerParams, ApprovalRejectParams, ApprovalView, ListApprovalsParams } from '../types.js';
import { APIResource } from './resource.js';

/** `mt.approvals`: calls waiting for a person, in a run or not; each is answered once. */
export class Approvals extends APIResource {
  /** The namespace's approvals, newest first: the pending ones unless `status` says otherwise. */
  async list(params: ListApprovalsParams = {}, options?: RequestOptions): Promise<ApprovalView[]> {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) if (value !== undefined) query.set(key, String(value));
    const text = query.toString();
    return this.client.request({ method: 'GET', path: `/v1/approvals${text ? `?${text}` : ''}` }, options);
  }

  /** One approval. */
  async get(id: string, options?: RequestOptions): Promise<ApprovalView> {
    return this.client.request({ method: 'GET', path: path`/v1/approvals/${id}` }, options);
  }

  /** Approves: exactly the call shown is made (409 `api:approvals:already-answered` if it was answered). */
  async approve(id: string, params: ApprovalAnswerParams = {}, options?: RequestOptions): Promise<ApprovalView> {
    return this.client.request({ method: 'POST', path: path`/v1/approvals/${id}/approve`, body: params }, options);
  }

  /** Rejects with a reason; the call is not made. */
  async reject(id: string, params: ApprovalRejectParams, options?: RequestOptions): Promise<ApprovalView> {
    return this.client.request({ method: 'POST', path: path`/v1/approvals/${id}/reject`, body: params }, options);
  }
}
