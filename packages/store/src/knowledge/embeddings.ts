import type { Db, Queryable } from '../db/db.js';
import { knowledgeBaseLanguage } from './knowledge-bases.js';
import { type KnowledgeSearchResult, searchKnowledgeBase } from './search.js';
import { exactVectorSearch, type VectorSearch } from './vector-search.js';

/** A passage that waits for its vector: its place and the text to embed (its title, then its text). */
export interface ChunkToEmbed {
  documentId: string;
  position: number;
  text: string;
}

/**
 * Up to `limit` passages of documents in status `embedding` that have no vector yet, oldest document first. Two
 * workers may read the same ones (nothing is locked while a model is asked): {@link storeEmbeddings} writes a
 * passage's vector once, so a passage is embedded at most twice, and stored once.
 */
export async function chunksToEmbed(db: Queryable, limit: number): Promise<ChunkToEmbed[]> {
  const { rows } = await db.query<{ document_id: string; position: number; title: string; text: string }>(
    'SELECT c.document_id, c.position, c.title, c.text FROM mt_kb_chunks c ' +
      "JOIN mt_kb_documents d ON d.id = c.document_id WHERE d.status = 'embedding' AND c.embedding IS NULL " +
      'ORDER BY d.created_at, c.document_id, c.position LIMIT $1',
    [limit],
  );
  return rows.map((row) => ({
    documentId: row.document_id,
    position: row.position,
    text: row.title === '' ? row.text : `${row.title}\n\n${row.text}`,
  }));
}

/**
 * Stores the vectors of embedded passages (each only where it has none: a passage replaced or embedded by another
 * worker meanwhile is left as it is), and marks `ready` every document none of whose passages waits any more; one
 * transaction.
 */
export async function storeEmbeddings(
  db: Db,
  vectors: { documentId: string; position: number; vector: number[] }[],
): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query(
      'UPDATE mt_kb_chunks c SET embedding = v.vector::real[] ' +
        'FROM unnest($1::uuid[], $2::int[], $3::text[]) AS v(document_id, position, vector) ' +
        'WHERE c.document_id = v.document_id AND c.position = v.position AND c.embedding IS NULL',
      [vectors.map((v) => v.documentId), vectors.map((v) => v.position), vectors.map((v) => `{${v.vector.join(',')}}`)],
    );
    await tx.query(
      "UPDATE mt_kb_documents d SET status = 'ready' WHERE d.id = ANY($1::uuid[]) AND d.status = 'embedding' " +
        'AND NOT EXISTS (SELECT 1 FROM mt_kb_chunks c WHERE c.document_id = d.id AND c.embedding IS NULL)',
      [[...new Set(vectors.map((v) => v.documentId))]],
    );
  });
}

/** How far down each ranking is read before fusing, and the k of reciprocal rank fusion. */
const FUSION_DEPTH = 50;
const RRF_K = 60;

/**
 * Hybrid search: the full-text ranking and the vector ranking (the passages nearest to `vector`, the query's unit
 * embedding) of knowledge base `knowledgeBaseId`, each read `FUSION_DEPTH` deep, fused by reciprocal rank fusion
 * (score: the sum over rankings of 1 / (60 + rank)). The vector ranking comes from `vectorSearch` (exact unless
 * told: see `chooseVectorSearch`).
 */
export async function hybridSearchKnowledgeBase(
  db: Queryable,
  namespace: string,
  knowledgeBaseId: string,
  input: { query: string; limit: number; vector: number[]; vectorSearch?: VectorSearch },
): Promise<KnowledgeSearchResult[]> {
  await knowledgeBaseLanguage(db, namespace, knowledgeBaseId);
  const fullText = await searchKnowledgeBase(db, namespace, knowledgeBaseId, {
    query: input.query,
    limit: FUSION_DEPTH,
  });
  const nearest = await (input.vectorSearch ?? exactVectorSearch).nearest(
    db,
    knowledgeBaseId,
    input.vector,
    FUSION_DEPTH,
  );
  const fused = new Map<string, KnowledgeSearchResult>();
  const add = (result: Omit<KnowledgeSearchResult, 'score'>, rank: number) => {
    const key = `${result.document.id}:${result.position}`;
    const found = fused.get(key) ?? { ...result, score: 0 };
    found.score += 1 / (RRF_K + rank + 1);
    fused.set(key, found);
  };
  for (const [rank, { score: _score, ...result }] of fullText.entries()) add(result, rank);
  for (const [rank, row] of nearest.entries()) {
    const document = { id: row.documentId, name: row.documentName };
    add({ text: row.text, title: row.title, position: row.position, document }, rank);
  }
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || a.document.name.localeCompare(b.document.name) || a.position - b.position)
    .slice(0, input.limit);
}

/** True when some passage of knowledge base `knowledgeBaseId` has a vector (a hybrid search has something to use). */
export async function hasEmbeddings(db: Queryable, knowledgeBaseId: string): Promise<boolean> {
  const { rows } = await db.query(
    'SELECT 1 FROM mt_kb_chunks WHERE knowledge_base_id = $1 AND embedding IS NOT NULL LIMIT 1',
    [knowledgeBaseId],
  );
  return rows.length > 0;
}
