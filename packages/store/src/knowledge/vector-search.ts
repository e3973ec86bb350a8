import type { Queryable } from '../db/db.js';

/** A passage near a query vector: its place, text and similarity (the dot product of unit vectors: the cosine). */
export interface VectorHit {
  documentId: string;
  documentName: string;
  position: number;
  title: string;
  text: string;
  similarity: number;
}

/** Which way a deployment searches vectors: `exact` (a plain real[] column, any PostgreSQL) or `pgvector`. */
export type VectorSearchKind = 'exact' | 'pgvector';

/**
 * Vector search over the passages of one knowledge base: the `limit` passages nearest to `vector` (the query's unit
 * embedding), best first, ties by document name and position. Passages without a vector are not searched.
 */
export interface VectorSearch {
  readonly kind: VectorSearchKind;
  nearest(db: Queryable, knowledgeBaseId: string, vector: number[], limit: number): Promise<VectorHit[]>;
}

interface HitRow {
  document_id: string;
  document_name: string;
  position: number;
  title: string;
  text: string;
  similarity: number | string;
}

const hits = (rows: HitRow[]): VectorHit[] =>
  rows.map((row) => ({
    documentId: row.document_id,
    documentName: row.document_name,
    position: row.position,
    title: row.title,
    text: row.text,
    similarity: Number(row.similarity),
  }));

// Exact: the dot product with every vector of the knowledge base, in one pass over its passages (the btree on
// knowledge_base_id picks them), the top `limit` taken on the chunks alone, and only those joined to their
// documents. The dot product is one arithmetic expression, `embedding[1] * q1 + embedding[2] * q2 + ...` with the
// query's numbers written into it (summed as a balanced tree, so that 1536 dimensions nest 11 deep, not 1536):
// PostgreSQL evaluates it per row without the set-returning unnest and aggregate of `sum(a * b) FROM unnest(...)`,
// two to three times faster (docs/performance.md at 3251c0c), and in real (float4) arithmetic, as the column and the sum
// over it were: 1.5 times faster again than float8 on PGlite. Passages whose vector has another number of
// dimensions (an embedding model changed) are not compared.
function exactSql(vector: number[]): string {
  const products = vector.map((x, i) => {
    if (!Number.isFinite(x)) throw new RangeError('a query vector holds a number that is not finite');
    return `c.embedding[${i + 1}] * (${x})::real`;
  });
  const sum = (terms: string[]): string =>
    terms.length === 1
      ? terms[0]
      : `(${sum(terms.slice(0, terms.length >> 1))} + ${sum(terms.slice(terms.length >> 1))})`;
  return `
SELECT s.document_id, d.name AS document_name, s.position, c.title, c.text, s.similarity
FROM (
  SELECT c.document_id, c.position, ${sum(products)} AS similarity
  FROM mt_kb_chunks c
  WHERE c.knowledge_base_id = $1 AND array_length(c.embedding, 1) = ${vector.length}
  ORDER BY similarity DESC
  LIMIT $2
) s
JOIN mt_kb_chunks c ON c.document_id = s.document_id AND c.position = s.position
JOIN mt_kb_documents d ON d.id = s.document_id
ORDER BY s.similarity DESC, d.name, s.position`;
}

/** Exact vector search on a plain real[] column: no extension, the same on PostgreSQL and PGlite. */
export const exactVectorSearch: VectorSearch = {
  kind: 'exact',
  async nearest(db, knowledgeBaseId, vector, limit) {
    if (vector.length === 0) return [];
    const { rows } = await db.query<HitRow>(exactSql(vector), [knowledgeBaseId, limit]);
    return hits(rows);
  },
};

/**
 * The pgvector query for vectors of `dimensions`: the real[] column cast to `vector(dimensions)` and ordered by
 * `<#>` (the negative inner product), which an HNSW index on that expression (docs/knowledge-bases.md) answers
 * without reading every vector, and pgvector's own code computes where there is none. Only passages whose vector
 * has that many dimensions are searched (the index's predicate, so that the planner may use it).
 */
export function pgvectorSql(dimensions: number): string {
  if (!Number.isInteger(dimensions) || dimensions < 1) throw new RangeError(`not a vector dimension: ${dimensions}`);
  const cast = `vector(${dimensions})`;
  return `
SELECT s.document_id, d.name AS document_name, s.position, s.title, s.text, s.similarity
FROM (
  SELECT c.document_id, c.position, c.title, c.text, -((c.embedding::${cast}) <#> $2::real[]::${cast}) AS similarity
  FROM mt_kb_chunks c
  WHERE c.knowledge_base_id = $1 AND array_length(c.embedding, 1) = ${dimensions}
  ORDER BY (c.embedding::${cast}) <#> $2::real[]::${cast}
  LIMIT $3
) s
JOIN mt_kb_documents d ON d.id = s.document_id
ORDER BY s.similarity DESC, d.name, s.position`;
}

/** Vector search through pgvector, for a server where the `vector` extension is installed in the database. */
export const pgvectorSearch: VectorSearch = {
  kind: 'pgvector',
  async nearest(db, knowledgeBaseId, vector, limit) {
    const { rows } = await db.query<HitRow>(pgvectorSql(vector.length), [
      knowledgeBaseId,
      `{${vector.join(',')}}`,
      limit,
    ]);
    return hits(rows);
  },
};

/** What the database says of pgvector: whether the server has it, and whether this database has it installed. */
export interface VectorSupport {
  available: boolean;
  installed: boolean;
}

/**
 * Whether pgvector can be used: `installed` (pg_extension: `CREATE EXTENSION vector` was run in this database) and
 * `available` (pg_available_extensions: the server has its files). A database that cannot say (a catalog refused)
 * counts as having neither: pgvector is never required.
 */
export async function detectVectorSupport(db: Queryable): Promise<VectorSupport> {
  try {
    const { rows } = await db.query<VectorSupport>(
      "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS available, " +
        "EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') AS installed",
    );
    return { available: rows[0].available === true, installed: rows[0].installed === true };
  } catch {
    return { available: false, installed: false };
  }
}

/** The vector search a deployment uses: pgvector where it is installed in the database, else exact. */
export function chooseVectorSearch(support: VectorSupport): VectorSearch {
  return support.installed ? pgvectorSearch : exactVectorSearch;
}
