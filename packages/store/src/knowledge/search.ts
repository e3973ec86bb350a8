import type * as wire from '@maitento/sdk/wire';
import type { Queryable } from '../db/db.js';
import { knowledgeBaseLanguage } from './knowledge-bases.js';

/** One passage found by a search: its text, score, document and position in it. */
export type KnowledgeSearchResult = wire.KnowledgeSearchResult;

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
//
// Scoring every chunk that holds any word of the question does not scale: in a large knowledge base the OR matches
// a large share of the chunks, and each must be read from the table (the GIN index knows which chunks hold a word,
// not how many of the words they hold). So the score is computed only for candidates the index can pick alone:
// the chunks that hold at least k of the query's n lexemes, the OR of every k of them, for the largest k that has
// `limit` chunks (tried from k = n down; {@link LEVEL_BUDGET} bounds the size of such a tsquery). Every other chunk
// holds fewer than k lexemes, so scores below k, below every candidate: the first `limit` are exact, as long as
// level k has at most {@link CANDIDATES} chunks. Past that (a one-word query over a large knowledge base) any
// CANDIDATES of them are ranked, after every chunk of level k + 1 and every chunk that holds a quoted phrase.
const CANDIDATES_SQL = `
WITH q AS (
  SELECT $3::tsquery AS any_term, ARRAY(SELECT unnest($5::text[])::tsquery) AS each_term,
    websearch_to_tsquery($2::regconfig, $4) AS phrases
), candidates AS (
  (SELECT document_id, position FROM mt_kb_chunks WHERE knowledge_base_id = $1 AND tsv @@ $6::tsquery)
  UNION
  (SELECT document_id, position FROM mt_kb_chunks WHERE knowledge_base_id = $1 AND tsv @@ $7::tsquery LIMIT $8)
  UNION
  (SELECT document_id, position FROM mt_kb_chunks
    WHERE knowledge_base_id = $1 AND tsv @@ websearch_to_tsquery($2::regconfig, $4) LIMIT $8)
)
SELECT c.document_id, d.name AS document_name, c.position, c.title, c.text,
  (SELECT count(*) FROM unnest(q.each_term) AS t WHERE c.tsv @@ t)
    + CASE WHEN c.tsv @@ q.phrases THEN 2 ELSE 0 END
    + ts_rank_cd(c.tsv, q.any_term, 32) AS score
FROM q, candidates k
  JOIN mt_kb_chunks c ON c.document_id = k.document_id AND c.position = k.position
  JOIN mt_kb_documents d ON d.id = c.document_id
WHERE c.tsv @@ q.any_term
ORDER BY score DESC, d.name, c.position
LIMIT $9`;

/** How many chunks of one level are scored at most (see above). */
const CANDIDATES = 1000;
/** The most lexemes (counted with repeats) the tsquery of one level may have; a level past it is not tried. */
const LEVEL_BUDGET = 256;

/** A lexeme as a tsquery operand, quoted as it is (no second normalisation). */
function operand(lexeme: string): string {
  return `'${lexeme.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/** Every way to pick `k` of `items`, in order. */
function combinations<T>(items: T[], k: number): T[][] {
  if (k === 0) return [[]];
  const out: T[][] = [];
  for (let i = 0; i <= items.length - k; i++)
    for (const rest of combinations(items.slice(i + 1), k - 1)) out.push([items[i], ...rest]);
  return out;
}

/** n choose k. */
function choose(n: number, k: number): number {
  let out = 1;
  for (let i = 1; i <= k; i++) out = (out * (n - k + i)) / i;
  return out;
}

/** The tsquery of the chunks that hold at least `k` of `terms` (quoted operands): the OR of every k of them. */
function atLeast(terms: string[], k: number): string {
  if (k === 1) return terms.join(' | ');
  return combinations(terms, k)
    .map((group) => `(${group.join(' & ')})`)
    .join(' | ');
}

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
  const lexemes = await db.query<{ lexemes: string[] | null }>(
    'SELECT tsvector_to_array(to_tsvector($1::regconfig, $2)) AS lexemes',
    [language, input.query],
  );
  const terms = (lexemes.rows[0]?.lexemes ?? []).map(operand);
  if (terms.length === 0) return [];
  // The levels, from all n lexemes down to any one of them: the first with `limit` chunks is ranked.
  let above: string | null = null;
  let level = atLeast(terms, 1);
  for (let k = terms.length; k >= 2; k--) {
    if (k * choose(terms.length, k) > LEVEL_BUDGET) continue;
    const query = atLeast(terms, k);
    const found = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM (SELECT 1 FROM mt_kb_chunks ' +
        'WHERE knowledge_base_id = $1 AND tsv @@ $2::tsquery LIMIT $3) AS level',
      [knowledgeBaseId, query, input.limit],
    );
    if (found.rows[0].n >= input.limit) {
      level = query;
      break;
    }
    above = query;
  }
  const { rows } = await db.query<ResultRow>(CANDIDATES_SQL, [
    knowledgeBaseId,
    language,
    terms.join(' | '),
    quotedPhrases(input.query),
    terms,
    above,
    level,
    CANDIDATES,
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
