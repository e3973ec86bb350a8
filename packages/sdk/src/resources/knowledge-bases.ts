import type { RequestOptions } from '../client.js';
import { path } from '../core/path.js';
import type {
  CreateKnowledgeBaseParams,
  KnowledgeBase,
  KnowledgeDocument,
  KnowledgeSearchResult,
  SearchKnowledgeBaseParams,
} from '../wire/knowledge.js';
import { APIResource } from './resource.js';

/** A document to add: its name (a document of the same name is replaced), content type and content. */
export interface AddDocumentParams {
  name: string;
  /** `text/plain`, `text/markdown`, `text/html` or `application/pdf`. */
  contentType: string;
  content: string | Uint8Array<ArrayBuffer>;
}

/** `mt.knowledgeBases`: documents split into passages that tools (and people) search. */
export class KnowledgeBases extends APIResource {
  /** Creates a knowledge base (admin). */
  async create(params: CreateKnowledgeBaseParams, options?: RequestOptions): Promise<KnowledgeBase> {
    return this.client.request({ method: 'POST', path: '/v1/knowledge-bases', body: params }, options);
  }

  /** The knowledge bases of the namespace, in name order. */
  async list(options?: RequestOptions): Promise<KnowledgeBase[]> {
    return this.client.request({ method: 'GET', path: '/v1/knowledge-bases' }, options);
  }

  /** Knowledge base `id`. */
  async get(id: string, options?: RequestOptions): Promise<KnowledgeBase> {
    return this.client.request({ method: 'GET', path: path`/v1/knowledge-bases/${id}` }, options);
  }

  /** Deletes knowledge base `id` with its documents (admin). */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    await this.client.request({ method: 'DELETE', path: path`/v1/knowledge-bases/${id}` }, options);
  }

  /** Adds (or replaces, by name) a document of knowledge base `id` (admin). */
  async addDocument(id: string, params: AddDocumentParams, options?: RequestOptions): Promise<KnowledgeDocument> {
    const query = new URLSearchParams({ name: params.name });
    return this.client.request(
      {
        method: 'POST',
        path: `${path`/v1/knowledge-bases/${id}/documents`}?${query}`,
        body: params.content,
        contentType: params.contentType,
      },
      options,
    );
  }

  /** The documents of knowledge base `id`, in name order. */
  async listDocuments(id: string, options?: RequestOptions): Promise<KnowledgeDocument[]> {
    return this.client.request({ method: 'GET', path: path`/v1/knowledge-bases/${id}/documents` }, options);
  }

  /** Document `documentId` of knowledge base `id`. */
  async getDocument(id: string, documentId: string, options?: RequestOptions): Promise<KnowledgeDocument> {
    return this.client.request(
      { method: 'GET', path: path`/v1/knowledge-bases/${id}/documents/${documentId}` },
      options,
    );
  }

  /** Deletes document `documentId` of knowledge base `id` (admin). */
  async deleteDocument(id: string, documentId: string, options?: RequestOptions): Promise<void> {
    await this.client.request(
      { method: 'DELETE', path: path`/v1/knowledge-bases/${id}/documents/${documentId}` },
      options,
    );
  }

  /** The passages of knowledge base `id` that best answer `params.query`, best first. */
  async search(
    id: string,
    params: SearchKnowledgeBaseParams,
    options?: RequestOptions,
  ): Promise<KnowledgeSearchResult[]> {
    const answer = await this.client.request<{ results: KnowledgeSearchResult[] }>(
      { method: 'POST', path: path`/v1/knowledge-bases/${id}/search`, body: params },
      options,
    );
    return answer.results;
  }
}
