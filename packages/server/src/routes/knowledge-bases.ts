import {
  AddDocumentQuerySchema,
  CreateKnowledgeBaseBodySchema,
  DocumentParamsSchema,
  IdParamsSchema,
  SearchKnowledgeBaseBodySchema,
  SearchKnowledgeBodySchema,
} from '@maitento/sdk';
import {
  createKnowledgeBase,
  deleteDocument,
  deleteKnowledgeBase,
  getDocument,
  getKnowledgeBase,
  listDocuments,
  listKnowledgeBases,
  putDocument,
} from '@maitento/store';
import type { FastifyRequest } from 'fastify';
import { serverErrors } from '../errors.js';
import { bindAnswer, sendBound } from '../plugins/idempotency.js';
import { documentChunks, documentType, type KnowledgeSearchDeps, searchKnowledge } from '../knowledge/index.js';
import { KNOWLEDGE_BASE_ID, MARKDOWN } from '../openapi/examples.js';
import { operation } from '../openapi/operation.js';
import type { Api, WireTypes } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';

/** The search deps of a request: the server's database and model, warnings in the request's log. */
function searchDeps(ctx: ServerContext, request: FastifyRequest): KnowledgeSearchDeps {
  return {
    db: ctx.db,
    ...(ctx.embeddingModel ? { embeddingModel: ctx.embeddingModel } : {}),
    vectorSearch: ctx.vectorSearch,
    warn: (obj, msg) => request.log.warn(obj, msg),
  };
}

/**
 * `/v1/knowledge-bases`: an admin creates knowledge bases and adds documents (plain text, Markdown, HTML, PDF,
 * by Content-Type, at most `knowledgeDocumentLimit` bytes each), any key of the namespace (and a platform token, a tool's
 * call through an `auth = "Maitento"` connector) lists and searches them. Every id is looked up in the request's
 * namespace only.
 */
export async function knowledgeBaseRoutes(app: Api, ctx: ServerContext): Promise<void> {
  // Documents come as they are (the file is the body): their parser lives in this plugin only.
  await app.register(async (kb) => {
    kb.removeAllContentTypeParsers();
    kb.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: ctx.knowledgeDocumentLimit }, (_request, body, done) =>
      done(null, body),
    );
    kb.withTypeProvider<WireTypes>().post(
      '/knowledge-bases/:id/documents',
      {
        config: { role: 'admin' },
        bodyLimit: ctx.knowledgeDocumentLimit,
        schema: operation({
          operationId: 'addKnowledgeDocument',
          tags: ['knowledge'],
          summary: 'Add a document (the body, by Content-Type); a document of the same name is replaced',
          description:
            'Adds a document to a knowledge base (admin key): the body is the file, as text/plain, text/markdown, ' +
            'text/html or application/pdf, named by ?name=. Its text is split into passages that follow its headings ' +
            'and paragraphs, and stored whole or not at all; a document of the same name is replaced.',
          params: IdParamsSchema,
          querystring: AddDocumentQuerySchema,
          rawBody: { types: ['text/plain', 'text/markdown', 'text/html', 'application/pdf'] },
          response: { 201: { $ref: 'KnowledgeDocument#' } },
          ok: 'The document, with how many passages it was split into',
          errors: [
            'api:knowledge:not-found',
            'api:knowledge:unsupported-type',
            'api:knowledge:empty',
            'api:knowledge:unreadable',
            'api:knowledge:document-too-complex',
          ],
          examples: {
            bodies: {
              'text/plain': 'Refunds are made to the original payment method within 14 days of the return arriving.\n',
              'text/markdown': MARKDOWN,
              'text/html': '<h1>Refunds</h1><p>Refunds are made within 14 days of the return arriving.</p>',
              'application/pdf': '%PDF-1.7 (the bytes of the PDF file)',
            },
          },
        }),
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
        const chunks = await documentChunks(request.query.name, type, body, ctx.knowledgeExtractBudget);
        let answer = '';
        await putDocument(
          ctx.db,
          namespace,
          request.params.id,
          {
            name: request.query.name,
            contentType: type,
            bytes: body.length,
            chunks,
            // With an embedding model the passages wait for their vectors (full-text search finds them already).
            embedding: ctx.embeddingModel !== undefined,
          },
          // The answer commits with the request's Idempotency-Key (decision 0102): a retry at any time answers this
          // document, never adds (replaces) it a second time.
          async (tx, document) => {
            answer = await bindAnswer(tx, reply, 201, document);
          },
        );
        ctx.embeddingWorker?.wake();
        return sendBound(reply.status(201), answer);
      },
    );
  });

  app.post(
    '/knowledge-bases',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'createKnowledgeBase',
        tags: ['knowledge'],
        summary: 'Create a knowledge base',
        description:
          'Creates an empty knowledge base (admin key), searched with the PostgreSQL text search language named ' +
          '(english by default) and, with an embedding model, by meaning too.',
        body: CreateKnowledgeBaseBodySchema,
        response: { 201: { $ref: 'KnowledgeBase#' } },
        ok: 'The knowledge base',
        errors: ['api:knowledge:exists', 'api:knowledge:language-unknown'],
        examples: {
          body: {
            name: 'Handbook',
            description: 'The support handbook: refunds, shipping, returns',
            language: 'english',
          },
        },
      }),
    },
    async (request, reply) => {
      const kb = await createKnowledgeBase(ctx.db, request.identity.namespace, request.body);
      return reply.status(201).send(kb);
    },
  );

  app.get(
    '/knowledge-bases',
    {
      schema: operation({
        operationId: 'listKnowledgeBases',
        tags: ['knowledge'],
        summary: 'List the knowledge bases',
        description: 'Lists the knowledge bases of the namespace, with how many documents and passages each holds.',
        response: { 200: { type: 'array', items: { $ref: 'KnowledgeBase#' } } },
        ok: 'The knowledge bases',
        errors: [],
      }),
    },
    async (request) => listKnowledgeBases(ctx.db, request.identity.namespace),
  );

  app.post(
    '/knowledge-bases/search',
    {
      schema: operation({
        operationId: 'searchKnowledge',
        tags: ['knowledge'],
        summary: 'Search a knowledge base named in the body (partitionId): what a bound tool calls',
        description:
          'Searches the knowledge base named in the body (partitionId), as a tool bound to it calls it; otherwise as ' +
          'searchKnowledgeBase.',
        body: SearchKnowledgeBodySchema,
        response: { 200: { $ref: 'KnowledgeSearch#' } },
        ok: 'The passages found, best first',
        errors: ['api:knowledge:not-found'],
        examples: { body: { partitionId: KNOWLEDGE_BASE_ID, query: 'how long does a refund take', limit: 5 } },
      }),
    },
    async (request) => {
      const { partitionId, query, limit } = request.body;
      return {
        results: await searchKnowledge(searchDeps(ctx, request), request.identity.namespace, partitionId, query, limit),
      };
    },
  );

  app.get(
    '/knowledge-bases/:id',
    {
      schema: operation({
        operationId: 'getKnowledgeBase',
        tags: ['knowledge'],
        summary: 'Get a knowledge base',
        description: 'Reads one knowledge base: its name, language, and how many documents and passages it holds.',
        params: IdParamsSchema,
        response: { 200: { $ref: 'KnowledgeBase#' } },
        ok: 'The knowledge base',
        errors: ['api:knowledge:not-found'],
      }),
    },
    async (request) => getKnowledgeBase(ctx.db, request.identity.namespace, request.params.id),
  );

  app.delete(
    '/knowledge-bases/:id',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'deleteKnowledgeBase',
        tags: ['knowledge'],
        summary: 'Delete a knowledge base with its documents',
        description: 'Deletes a knowledge base with its documents and passages (admin key).',
        params: IdParamsSchema,
        response: { 204: { type: 'null' } },
        ok: 'The knowledge base was deleted',
        errors: ['api:knowledge:not-found'],
      }),
    },
    async (request, reply) => {
      await deleteKnowledgeBase(ctx.db, request.identity.namespace, request.params.id);
      return reply.status(204).send();
    },
  );

  app.post(
    '/knowledge-bases/:id/search',
    {
      schema: operation({
        operationId: 'searchKnowledgeBase',
        tags: ['knowledge'],
        summary: 'Search a knowledge base: the passages that best answer a question, best first',
        description:
          'Searches a knowledge base: the passages that best answer a question, best first (full-text ranking, fused ' +
          'with vector similarity when the server has an embedding model).',
        params: IdParamsSchema,
        body: SearchKnowledgeBaseBodySchema,
        response: { 200: { $ref: 'KnowledgeSearch#' } },
        ok: 'The passages found, best first',
        errors: ['api:knowledge:not-found'],
        examples: { body: { query: 'how long does a refund take', limit: 5 } },
      }),
    },
    async (request) => {
      return {
        results: await searchKnowledge(
          searchDeps(ctx, request),
          request.identity.namespace,
          request.params.id,
          request.body.query,
          request.body.limit,
        ),
      };
    },
  );

  app.get(
    '/knowledge-bases/:id/documents',
    {
      schema: operation({
        operationId: 'listKnowledgeDocuments',
        tags: ['knowledge'],
        summary: 'List the documents of a knowledge base',
        description: 'Lists the documents of a knowledge base, with their size, passages and whether they are ready.',
        params: IdParamsSchema,
        response: { 200: { type: 'array', items: { $ref: 'KnowledgeDocument#' } } },
        ok: 'The documents',
        errors: ['api:knowledge:not-found'],
      }),
    },
    async (request) => listDocuments(ctx.db, request.identity.namespace, request.params.id),
  );

  app.get(
    '/knowledge-bases/:id/documents/:documentId',
    {
      schema: operation({
        operationId: 'getKnowledgeDocument',
        tags: ['knowledge'],
        summary: 'Get a document of a knowledge base',
        description: 'Reads one document of a knowledge base (not its text).',
        params: DocumentParamsSchema,
        response: { 200: { $ref: 'KnowledgeDocument#' } },
        ok: 'The document',
        errors: ['api:knowledge:not-found', 'api:knowledge:document-not-found'],
      }),
    },
    async (request) => getDocument(ctx.db, request.identity.namespace, request.params.id, request.params.documentId),
  );

  app.delete(
    '/knowledge-bases/:id/documents/:documentId',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'deleteKnowledgeDocument',
        tags: ['knowledge'],
        summary: 'Delete a document with its passages',
        description: 'Deletes a document with its passages (admin key).',
        params: DocumentParamsSchema,
        response: { 204: { type: 'null' } },
        ok: 'The document was deleted',
        errors: ['api:knowledge:not-found', 'api:knowledge:document-not-found'],
      }),
    },
    async (request, reply) => {
      await deleteDocument(ctx.db, request.identity.namespace, request.params.id, request.params.documentId);
      return reply.status(204).send();
    },
  );
}
