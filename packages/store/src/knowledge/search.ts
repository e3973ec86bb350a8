import type { Queryable } from '../db/db.js';
import { knowledgeBaseLanguage } from './knowledge-bases.js';

/** One passage found by a search: its text, score, document and position in it. */
export interface KnowledgeSearchResult {
  text: string;
  /** Higher is better; comparable only within one search. */
  score: number;
  /** The headings the passage is under (a PDF's page), joined with " > ". */
  title: string;
  /** The passage's place in its document, from 0. */
  position: number;
  document: { id: string; name: string };
}

interface ResultRow {
  document_id: string;
  document_name: string;
  position: number;
  title: string;
  text: string;
  score: number | string;
}

/** The quoted parts of a query (`"annual leave"`), each to be found as a phrase. */
function quotedPhrases(query: string): string | null {
  const phrases = [...query.matchAll(/"([^"]+)"/g)].map((match) => match[1].trim()).filter((p) => p !== '');
  return phrases.length === 0 ? null : phrases.map((phrase) => `"${phrase}"`).join(' or ');
}

// A chunk matches when it shares any lexeme of the query (an OR of them: people ask questions, and a question
// shares only some of its words with the passage that answers it). Its score is how many distinct lexemes of the
// query it holds, plus 2 when it holds a quoted phrase of the query (`"sick leave"`, words next to each other),
// plus ts_rank_cd of the OR scaled into [0, 1) (normalization 32: rank / (rank + 1)), which orders chunks that hold
// as many words by how often and how close together they hold them (a title's words weigh more: weight A).
// The query's lexemes are quoted into the tsquery as they are, not normalised a second time.
const FULL_TEXT_SQL = `
WITH terms AS (
  SELECT DISTINCT '''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || '''' AS term
  FROM unnest(tsvector_to_array(to_tsvector($2::regconfig, $3))) AS lexeme
), q AS (
  SELECT (SELECT array_agg(term::tsquery) FROM terms) AS each_term,
    (SELECT string_agg(term, ' | ') FROM terms)::tsquery AS any_term,
    websearch_to_tsquery($2::regconfig, $4) AS phrases
)
SELECT c.document_id, d.name AS document_name, c.position, c.title, c.text,
  (SELECT count(*) FROM unnest(q.each_term) AS t WHERE c.tsv @@ t)
    + CASE WHEN c.tsv @@ q.phrases THEN 2 ELSE 0 END
    + ts_rank_cd(c.tsv, q.any_term, 32) AS score
FROM q, mt_kb_chunks c JOIN mt_kb_documents d ON d.id = c.document_id
WHERE c.knowledge_base_id = $1 AND c.tsv @@ q.any_term
ORDER BY score DESC, d.name, c.position
LIMIT $5`;

/**
 * The `limit` passages of knowledge base `knowledgeBaseId` of `namespace` that best match `query`, by PostgreSQL
 * full-text search in the knowledge base's language; `api:knowledge:not-found` for a knowledge base not there.
 */
export async function searchKnowledgeBase(
  db: Queryable,
  namespace: string,
  knowledgeBaseId: string,
  input: { query: string; limit: number },
): Promise<KnowledgeSearchResult[]> {
  const language = await knowledgeBaseLanguage(db, namespace, knowledgeBaseId);
  const { rows } = await db.query<ResultRow>(FULL_TEXT_SQL, [
    knowledgeBaseId,
    language,
    input.query,
    quotedPhrases(input.query),
    input.limit,
  ]);
  return rows.map((row) => ({
    text: row.text,
    score: Number(row.score),
    title: row.title,
    position: row.position,
    document: { id: row.document_id, name: row.document_name },
  }));
}
