import { randomUUID } from 'node:crypto';
import type * as wire from '@maitento/sdk/wire';
import type { Db, Queryable } from '../db/db.js';
import { storeErrors } from '../errors.js';
import { iso } from '../internal/rows.js';
import { isUuid } from '../internal/uuid.js';
import { notifyWake, wakeTopics } from '../wake/notify.js';
import { knowledgeBaseLanguage, lockKnowledgeBase } from './knowledge-bases.js';

/** One passage of a document: the heading path it is under and its text. */
export interface NewChunk {
  title: string;
  text: string;
}

/** A document of a knowledge base as listed (its text is in its chunks). */
export type KnowledgeDocument = wire.KnowledgeDocument;

interface DocumentRow {
  id: string;
  name: string;
  content_type: string;
  bytes: number;
  chunk_count: number;
  status: 'embedding' | 'ready';
  created_at: Date;
}

function document(row: DocumentRow): KnowledgeDocument {
  return {
    id: row.id,
    name: row.name,
    contentType: row.content_type,
    bytes: row.bytes,
    chunkCount: row.chunk_count,
    status: row.status,
    createdAt: iso(row.created_at),
  };
}

const DOCUMENT_COLUMNS = 'id, name, content_type, bytes, chunk_count, status, created_at';

/**
 * Stores document `name` of knowledge base `knowledgeBaseId` with its chunks, in one transaction: a document of
 * the same name is replaced (searches see the old one or the new one, never both or neither). `embedding` marks
 * it as waiting for its vectors. `onStored`, when given, runs last in the same transaction with the document as
 * stored (a keyed request binds its answer to its Idempotency-Key there: decision 0102).
 */
export async function putDocument(
  db: Db,
  namespace: string,
  knowledgeBaseId: string,
  input: { name: string; contentType: string; bytes: number; chunks: NewChunk[]; embedding?: boolean },
  onStored?: (tx: Queryable, stored: KnowledgeDocument) => Promise<void>,
): Promise<KnowledgeDocument> {
  return db.transaction(async (tx) => {
    const language = await lockKnowledgeBase(tx, namespace, knowledgeBaseId);
    await tx.query('DELETE FROM mt_kb_documents WHERE knowledge_base_id = $1 AND name = $2', [
      knowledgeBaseId,
      input.name,
    ]);
    const id = randomUUID();
    const { rows } = await tx.query<DocumentRow>(
      'INSERT INTO mt_kb_documents (id, knowledge_base_id, name, content_type, bytes, chunk_count, status) ' +
        `VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${DOCUMENT_COLUMNS}`,
      [
        id,
        knowledgeBaseId,
        input.name,
        input.contentType,
        input.bytes,
        input.chunks.length,
        input.embedding ? 'embedding' : 'ready',
      ],
    );
    // One statement for every chunk; the title weighs more (A) than the text (D) in the ranking.
    await tx.query(
      'INSERT INTO mt_kb_chunks (document_id, knowledge_base_id, position, title, text, tsv) ' +
        'SELECT $1, $2, c.position, c.title, c.text, ' +
        "setweight(to_tsvector($3::regconfig, c.title), 'A') || to_tsvector($3::regconfig, c.text) " +
        'FROM unnest($4::int[], $5::text[], $6::text[]) AS c(position, title, text)',
      [
        id,
        knowledgeBaseId,
        language,
        input.chunks.map((_, i) => i),
        input.chunks.map((chunk) => chunk.title),
        input.chunks.map((chunk) => chunk.text),
      ],
    );
    // The embedding workers of every process look at once (delivered at commit).
    if (input.embedding) await notifyWake(tx, wakeTopics.embeddings);
    const stored = document(rows[0]);
    await onStored?.(tx, stored);
    return stored;
  });
}

/** The documents of knowledge base `knowledgeBaseId` of `namespace`, in name order. */
export async function listDocuments(
  db: Queryable,
  namespace: string,
  knowledgeBaseId: string,
): Promise<KnowledgeDocument[]> {
  await knowledgeBaseLanguage(db, namespace, knowledgeBaseId);
  const { rows } = await db.query<DocumentRow>(
    `SELECT ${DOCUMENT_COLUMNS} FROM mt_kb_documents WHERE knowledge_base_id = $1 ORDER BY name`,
    [knowledgeBaseId],
  );
  return rows.map(document);
}

/** Document `id` of knowledge base `knowledgeBaseId` of `namespace`. */
export async function getDocument(
  db: Queryable,
  namespace: string,
  knowledgeBaseId: string,
  id: string,
): Promise<KnowledgeDocument> {
  await knowledgeBaseLanguage(db, namespace, knowledgeBaseId);
  const notFound = () => storeErrors.create('api:knowledge:document-not-found', { id, knowledgeBase: knowledgeBaseId });
  if (!isUuid(id)) throw notFound();
  const { rows } = await db.query<DocumentRow>(
    `SELECT ${DOCUMENT_COLUMNS} FROM mt_kb_documents WHERE knowledge_base_id = $1 AND id = $2`,
    [knowledgeBaseId, id],
  );
  if (!rows[0]) throw notFound();
  return document(rows[0]);
}

/** Deletes document `id` of knowledge base `knowledgeBaseId` of `namespace` with its chunks. */
export async function deleteDocument(
  db: Queryable,
  namespace: string,
  knowledgeBaseId: string,
  id: string,
): Promise<void> {
  await knowledgeBaseLanguage(db, namespace, knowledgeBaseId);
  const notFound = () => storeErrors.create('api:knowledge:document-not-found', { id, knowledgeBase: knowledgeBaseId });
  if (!isUuid(id)) throw notFound();
  const { rows } = await db.query('DELETE FROM mt_kb_documents WHERE knowledge_base_id = $1 AND id = $2 RETURNING 1', [
    knowledgeBaseId,
    id,
  ]);
  if (rows.length === 0) throw notFound();
}
