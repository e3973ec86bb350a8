// Knowledge bases: the answers of /v1/knowledge-bases and what its requests carry, declared once like ./schemas.ts
// and ./requests.ts. The store's types are these (packages/store/src/knowledge/ imports them).
import { type Static, Type } from 'typebox';
import { timestamp, uuid } from './formats.js';
import { ref, stringEnum } from './schemas.js';

/** The statuses of a document: `embedding` while its chunks wait for vectors, `ready` once searchable in every mode. */
export const DOCUMENT_STATUSES = ['embedding', 'ready'] as const;

/** A knowledge base; its id is what a run binds as `partitionId`. */
export const KnowledgeBaseSchema = Type.Object(
  {
    id: uuid(),
    name: Type.String(),
    description: Type.String(),
    language: Type.String({ description: 'The PostgreSQL text search configuration (english by default)' }),
    documentCount: Type.Integer(),
    chunkCount: Type.Integer(),
    createdAt: timestamp(),
  },
  { $id: 'KnowledgeBase' },
);

/** A document of a knowledge base, as stored in chunks. */
export const KnowledgeDocumentSchema = Type.Object(
  {
    id: uuid(),
    name: Type.String(),
    contentType: Type.String(),
    bytes: Type.Integer(),
    chunkCount: Type.Integer(),
    status: stringEnum(DOCUMENT_STATUSES),
    createdAt: timestamp(),
  },
  { $id: 'KnowledgeDocument' },
);

/** One passage a search found. */
export const KnowledgeSearchResultSchema = Type.Object(
  {
    text: Type.String(),
    score: Type.Number({ description: 'Higher is better; comparable only within one search' }),
    title: Type.String({ description: 'The headings the passage is under (for a PDF, its page)' }),
    position: Type.Integer({ description: "The passage's place in its document, from 0" }),
    document: Type.Object({ id: uuid(), name: Type.String() }),
  },
  { $id: 'KnowledgeSearchResult' },
);

/** The answer of a search: the best passages first. */
export const KnowledgeSearchSchema = Type.Object(
  { results: Type.Array(ref(KnowledgeSearchResultSchema)) },
  { $id: 'KnowledgeSearch' },
);

/** The schemas of this file with an `$id`, in the order a server adds them. */
export const knowledgeWireSchemas = [
  KnowledgeBaseSchema,
  KnowledgeDocumentSchema,
  KnowledgeSearchResultSchema,
  KnowledgeSearchSchema,
] as const;

// Requests.

/** The body of `POST /v1/knowledge-bases`. */
export const CreateKnowledgeBaseBodySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\u0000-\\u001f]+$' }),
    description: Type.Optional(Type.String({ maxLength: 4000 })),
    language: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 63,
        description: 'A PostgreSQL text search configuration: english (the default), french, german, simple, ...',
      }),
    ),
  },
  { additionalProperties: false },
);

const searchFields = {
  query: Type.String({
    minLength: 1,
    maxLength: 2000,
    description: 'A question or a few words; "quoted" phrases rank higher',
  }),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 50, description: 'At most this many passages (default 5)' }),
  ),
};

/** The body of `POST /v1/knowledge-bases/{id}/search`. */
export const SearchKnowledgeBaseBodySchema = Type.Object(searchFields, { additionalProperties: false });

/** The body of `POST /v1/knowledge-bases/search`: the knowledge base as a field, as a tool's bound `partitionId`. */
export const SearchKnowledgeBodySchema = Type.Object(
  {
    partitionId: Type.String({ minLength: 1, maxLength: 100, description: 'The id of the knowledge base' }),
    ...searchFields,
  },
  { additionalProperties: false },
);

/** The query of `POST /v1/knowledge-bases/{id}/documents`: the document's name (the body is the file). */
export const AddDocumentQuerySchema = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 1000, pattern: '^[^\\u0000-\\u001f]+$' }) },
  { additionalProperties: false },
);

/** The `:id/documents/:documentId` path parameters. */
export const DocumentParamsSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 100 }),
  documentId: Type.String({ minLength: 1, maxLength: 100 }),
});

/** A knowledge base. */
export type KnowledgeBase = Static<typeof KnowledgeBaseSchema>;
/** A document of a knowledge base. */
export type KnowledgeDocument = Static<typeof KnowledgeDocumentSchema>;
/** One passage a search found. */
export type KnowledgeSearchResult = Static<typeof KnowledgeSearchResultSchema>;
/** The parameters of `mt.knowledgeBases.create`. */
export type CreateKnowledgeBaseParams = Static<typeof CreateKnowledgeBaseBodySchema>;
/** The parameters of `mt.knowledgeBases.search`. */
export type SearchKnowledgeBaseParams = Static<typeof SearchKnowledgeBaseBodySchema>;
