import {
  createKnowledgeBase,
  deleteDocument,
  deleteKnowledgeBase,
  getDocument,
  getKnowledgeBase,
  hasEmbeddings,
  hybridSearchKnowledgeBase,
  type KnowledgeSearchResult,
  listDocuments,
  listKnowledgeBases,
  putDocument,
  searchKnowledgeBase,
} from '@maitento/store';
import type { OperationRequest } from '@maitento/sdk';
import { embedQuery } from '@maitento/engine';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { serverErrors } from '../errors.js';
import type { ServerContext } from '../server/context.js';
import { documentChunks, documentType } from '../knowledge/extract.js';
import { operation, responses } from '../schemas/shared.js';

/** How many passages a search returns when the request does not say. */
const DEFAULT_SEARCH_LIMIT = 5;

/**
 * One search: hybrid (full-text and vectors, fused) when an embedding model is configured and some passage of the
 * knowledge base has a vector, else full-text alone. A query the model fails to embed is searched by full-text
 * search alone, and the failure logged.
 */
async function search(
  ctx: ServerContext,
  request: FastifyRequest,
  knowledgeBaseId: string,
  query: string,
  limit = DEFAULT_SEARCH_LIMIT,
): Promise<KnowledgeSearchResult[]> {
  const { namespace } = request.identity;
  const fullText = () => searchKnowledgeBase(ctx.db, namespace, knowledgeBaseId, { query, limit });
  if (!ctx.embeddingModel) return fullText();
  await getKnowledgeBase(ctx.db, namespace, knowledgeBaseId);
  if (!(await hasEmbeddings(ctx.db, knowledgeBaseId))) return fullText();
  let vector: number[];
  try {
    vector = await embedQuery(ctx.embeddingModel, query);
  } catch (error) {
    request.log.warn(
      { reason: error instanceof Error ? error.message : String(error) },
      'the search query could not be embedded; full-text search alone answers',
    );
    return fullText();
  }
  return hybridSearchKnowledgeBase(ctx.db, namespace, knowledgeBaseId, {
    query,
    limit,
    vector,
    vectorSearch: ctx.vectorSearch,
  });
}

/**
 * `/v1/knowledge-bases`: an admin creates knowledge bases and adds documents (plain text, Markdown, HTML, PDF,
 * by Content-Type, at most `knowledgeDocumentLimit` bytes each), any key of the namespace (and a platform token, a tool's
 * call through an `auth = "Maitento"` connector) lists and searches them. Every id is looked up in the request's
 * namespace only.
 */
export async function knowledgeBaseRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  // Documents come as they are (the file is the body): their parser lives in this plugin only.
  await app.register(async (kb) => {
    kb.removeAllContentTypeParsers();
    kb.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: ctx.knowledgeDocumentLimit }, (_request, body, done) =>
      done(null, body),
    );
    kb.post<OperationRequest<'addKnowledgeDocument'>>(
      '/knowledge-bases/:id/documents',
      {
        config: { role: 'admin' },
        bodyLimit: ctx.knowledgeDocumentLimit,
        schema: {
          ...operation('addKnowledgeDocument'),
          tags: ['knowledge'],
          summary: 'Add a document (the body, by Content-Type); a document of the same name is replaced',
          description:
            'The body is the file: text/plain, text/markdown, text/html or application/pdf. It is split into ' +
            'passages that follow its headings and paragraphs, and stored whole or not at all.',
          response: responses({ 201: { $ref: 'KnowledgeDocument#' } }),
        },
      },
      async (request, reply) => {
        const { namespace } = request.identity;
        const type = documentType(request.headers['content-type']);
        if (!type) {
          throw serverErrors.create('api:knowledge:unsupported-type', {
            type: request.headers['content-type'] ?? 'none',
          });
        }
        // The knowledge base is checked before the file is read, so a deleted one says so whatever is sent.
        await getKnowledgeBase(ctx.db, namespace, request.params.id);
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const chunks = await documentChunks(request.query.name, type, body);
        const document = await putDocument(ctx.db, namespace, request.params.id, {
          name: request.query.name,
          contentType: type,
          bytes: body.length,
          chunks,
          // With an embedding model the passages wait for their vectors (full-text search finds them already).
          embedding: ctx.embeddingModel !== undefined,
        });
        ctx.embeddingWorker?.wake();
        return reply.status(201).send(document);
      },
    );
  });

  app.post<OperationRequest<'createKnowledgeBase'>>(
    '/knowledge-bases',
    {
      config: { role: 'admin' },
      schema: {
        ...operation('createKnowledgeBase'),
        tags: ['knowledge'],
        summary: 'Create a knowledge base',
        response: responses({ 201: { $ref: 'KnowledgeBase#' } }),
      },
    },
    async (request, reply) => {
      const kb = await createKnowledgeBase(ctx.db, request.identity.namespace, request.body);
      return reply.status(201).send(kb);
    },
  );

  app.get(
    '/knowledge-bases',
    {
      schema: {
        ...operation('listKnowledgeBases'),
        tags: ['knowledge'],
        summary: 'List the knowledge bases',
        response: responses({ 200: { type: 'array', items: { $ref: 'KnowledgeBase#' } } }),
      },
    },
    async (request) => listKnowledgeBases(ctx.db, request.identity.namespace),
  );

  app.post<OperationRequest<'searchKnowledge'>>(
    '/knowledge-bases/search',
    {
      schema: {
        ...operation('searchKnowledge'),
        tags: ['knowledge'],
        summary: 'Search a knowledge base named in the body (partitionId): what a bound tool calls',
        response: responses({ 200: { $ref: 'KnowledgeSearch#' } }),
      },
    },
    async (request) => {
      const { partitionId, query, limit } = request.body;
      return { results: await search(ctx, request, partitionId, query, limit) };
    },
  );

  app.get<OperationRequest<'getKnowledgeBase'>>(
    '/knowledge-bases/:id',
    {
      schema: {
        ...operation('getKnowledgeBase'),
        tags: ['knowledge'],
        summary: 'Get a knowledge base',
        response: responses({ 200: { $ref: 'KnowledgeBase#' } }),
      },
    },
    async (request) => getKnowledgeBase(ctx.db, request.identity.namespace, request.params.id),
  );

  app.delete<OperationRequest<'deleteKnowledgeBase'>>(
    '/knowledge-bases/:id',
    {
      config: { role: 'admin' },
      schema: {
        ...operation('deleteKnowledgeBase'),
        tags: ['knowledge'],
        summary: 'Delete a knowledge base with its documents',
        response: responses({ 204: { type: 'null' } }),
      },
    },
    async (request, reply) => {
      await deleteKnowledgeBase(ctx.db, request.identity.namespace, request.params.id);
      return reply.status(204).send();
    },
  );

  app.post<OperationRequest<'searchKnowledgeBase'>>(
    '/knowledge-bases/:id/search',
    {
      schema: {
        ...operation('searchKnowledgeBase'),
        tags: ['knowledge'],
        summary: 'Search a knowledge base: the passages that best answer a question, best first',
        response: responses({ 200: { $ref: 'KnowledgeSearch#' } }),
      },
    },
    async (request) => {
      return { results: await search(ctx, request, request.params.id, request.body.query, request.body.limit) };
    },
  );

  app.get<OperationRequest<'listKnowledgeDocuments'>>(
    '/knowledge-bases/:id/documents',
    {
      schema: {
        ...operation('listKnowledgeDocuments'),
        tags: ['knowledge'],
        summary: 'List the documents of a knowledge base',
        response: responses({ 200: { type: 'array', items: { $ref: 'KnowledgeDocument#' } } }),
      },
    },
    async (request) => listDocuments(ctx.db, request.identity.namespace, request.params.id),
  );

  app.get<OperationRequest<'getKnowledgeDocument'>>(
    '/knowledge-bases/:id/documents/:documentId',
    {
      schema: {
        ...operation('getKnowledgeDocument'),
        tags: ['knowledge'],
        summary: 'Get a document of a knowledge base',
        response: responses({ 200: { $ref: 'KnowledgeDocument#' } }),
      },
    },
    async (request) => getDocument(ctx.db, request.identity.namespace, request.params.id, request.params.documentId),
  );

  app.delete<OperationRequest<'deleteKnowledgeDocument'>>(
    '/knowledge-bases/:id/documents/:documentId',
    {
      config: { role: 'admin' },
      schema: {
        ...operation('deleteKnowledgeDocument'),
        tags: ['knowledge'],
        summary: 'Delete a document with its passages',
        response: responses({ 204: { type: 'null' } }),
      },
    },
    async (request, reply) => {
      await deleteDocument(ctx.db, request.identity.namespace, request.params.id, request.params.documentId);
      return reply.status(204).send();
    },
  );
}
