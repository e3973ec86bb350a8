import { randomUUID } from 'node:crypto';
import type * as wire from '@maitento/sdk/wire';
import type { Queryable } from '../db/db.js';
import { storeErrors } from '../errors.js';
import { iso, isUniqueViolation } from '../internal/rows.js';
import { isUuid } from '../internal/uuid.js';

/** A knowledge base: the id is what a run binds as `partitionId`. */
export type KnowledgeBase = wire.KnowledgeBase;

interface KnowledgeBaseRow {
  id: string;
  name: string;
  description: string;
  language: string;
  document_count: number | string;
  chunk_count: number | string;
  created_at: Date;
}

function knowledgeBase(row: KnowledgeBaseRow): KnowledgeBase {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    language: row.language,
    documentCount: Number(row.document_count),
    chunkCount: Number(row.chunk_count),
    createdAt: iso(row.created_at),
  };
}

const SELECT_KB =
  'SELECT kb.id, kb.name, kb.description, kb.language, kb.created_at, ' +
  '(SELECT count(*) FROM mt_kb_documents d WHERE d.knowledge_base_id = kb.id) AS document_count, ' +
  '(SELECT COALESCE(sum(d.chunk_count), 0) FROM mt_kb_documents d WHERE d.knowledge_base_id = kb.id) AS chunk_count ' +
  'FROM mt_knowledge_bases kb';

/** The default text search configuration of a knowledge base. */
export const DEFAULT_KB_LANGUAGE = 'english';

/**
 * Creates a knowledge base in `namespace`; a name already taken is `api:knowledge:exists`, a language the
 * database has no text search configuration for is `api:knowledge:language-unknown`.
 */
export async function createKnowledgeBase(
  db: Queryable,
  namespace: string,
  input: { name: string; description?: string; language?: string },
): Promise<KnowledgeBase> {
  const language = input.language ?? DEFAULT_KB_LANGUAGE;
  const configs = await db.query<{ cfgname: string }>('SELECT cfgname FROM pg_ts_config ORDER BY cfgname');
  if (!configs.rows.some((row) => row.cfgname === language)) {
    throw storeErrors.create('api:knowledge:language-unknown', {
      language,
      known: configs.rows.map((row) => row.cfgname).join(', '),
    });
  }
  const id = randomUUID();
  try {
    await db.query(
      'INSERT INTO mt_knowledge_bases (id, namespace, name, description, language) VALUES ($1, $2, $3, $4, $5)',
      [id, namespace, input.name, input.description ?? '', language],
    );
  } catch (error) {
    if (isUniqueViolation(error)) throw storeErrors.create('api:knowledge:exists', { name: input.name });
    throw error;
  }
  return getKnowledgeBase(db, namespace, id);
}

/** The knowledge bases of `namespace`, in name order. */
export async function listKnowledgeBases(db: Queryable, namespace: string): Promise<KnowledgeBase[]> {
  const { rows } = await db.query<KnowledgeBaseRow>(`${SELECT_KB} WHERE kb.namespace = $1 ORDER BY kb.name`, [
    namespace,
  ]);
  return rows.map(knowledgeBase);
}

/** Knowledge base `id` of `namespace`; any other id (of another namespace, deleted, malformed) is `api:knowledge:not-found`. */
export async function getKnowledgeBase(db: Queryable, namespace: string, id: string): Promise<KnowledgeBase> {
  if (!isUuid(id)) throw storeErrors.create('api:knowledge:not-found', { id });
  const { rows } = await db.query<KnowledgeBaseRow>(`${SELECT_KB} WHERE kb.namespace = $1 AND kb.id = $2`, [
    namespace,
    id,
  ]);
  if (!rows[0]) throw storeErrors.create('api:knowledge:not-found', { id });
  return knowledgeBase(rows[0]);
}

/** Deletes knowledge base `id` of `namespace` with its documents and chunks. */
export async function deleteKnowledgeBase(db: Queryable, namespace: string, id: string): Promise<void> {
  if (!isUuid(id)) throw storeErrors.create('api:knowledge:not-found', { id });
  const { rows } = await db.query('DELETE FROM mt_knowledge_bases WHERE namespace = $1 AND id = $2 RETURNING 1', [
    namespace,
    id,
  ]);
  if (rows.length === 0) throw storeErrors.create('api:knowledge:not-found', { id });
}

/**
 * The language of knowledge base `id` of `namespace`, locking its row until the transaction `tx` ends (so two
 * writes of one document name are one after the other); `api:knowledge:not-found` when there is none.
 */
export async function lockKnowledgeBase(tx: Queryable, namespace: string, id: string): Promise<string> {
  if (!isUuid(id)) throw storeErrors.create('api:knowledge:not-found', { id });
  const { rows } = await tx.query<{ language: string }>(
    'SELECT language FROM mt_knowledge_bases WHERE namespace = $1 AND id = $2 FOR UPDATE',
    [namespace, id],
  );
  if (!rows[0]) throw storeErrors.create('api:knowledge:not-found', { id });
  return rows[0].language;
}

/** The language of knowledge base `id` of `namespace` (read, not locked); `api:knowledge:not-found` when there is none. */
export async function knowledgeBaseLanguage(db: Queryable, namespace: string, id: string): Promise<string> {
  if (!isUuid(id)) throw storeErrors.create('api:knowledge:not-found', { id });
  const { rows } = await db.query<{ language: string }>(
    'SELECT language FROM mt_knowledge_bases WHERE namespace = $1 AND id = $2',
    [namespace, id],
  );
  if (!rows[0]) throw storeErrors.create('api:knowledge:not-found', { id });
  return rows[0].language;
}
