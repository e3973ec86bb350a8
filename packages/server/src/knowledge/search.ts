import { type EmbeddingModel, embedQuery } from '@maitento/engine';
import {
  type Db,
  getKnowledgeBase,
  hasEmbeddings,
  hybridSearchKnowledgeBase,
  type KnowledgeSearchResult,
  searchKnowledgeBase,
  type VectorSearch,
} from '@maitento/store';

/** How many passages a search returns when the request does not say. */
export const DEFAULT_SEARCH_LIMIT = 5;

/** What a search reads: the database, the embedding model when one is configured, and how vectors are searched. */
export interface KnowledgeSearchDeps {
  db: Db;
  embeddingModel?: EmbeddingModel;
  vectorSearch: VectorSearch;
  /** Told when the query could not be embedded (full-text search alone then answers). */
  warn: (obj: object, msg: string) => void;
}

/**
 * One search of a knowledge base of `namespace`: hybrid (full-text and vectors, fused) when an embedding model is
 * configured and some passage of the knowledge base has a vector, else full-text alone. A query the model fails to
 * embed is searched by full-text search alone, and the failure logged.
 */
export async function searchKnowledge(
  deps: KnowledgeSearchDeps,
  namespace: string,
  knowledgeBaseId: string,
  query: string,
  limit = DEFAULT_SEARCH_LIMIT,
): Promise<KnowledgeSearchResult[]> {
  const fullText = () => searchKnowledgeBase(deps.db, namespace, knowledgeBaseId, { query, limit });
  if (!deps.embeddingModel) return fullText();
  await getKnowledgeBase(deps.db, namespace, knowledgeBaseId);
  if (!(await hasEmbeddings(deps.db, knowledgeBaseId))) return fullText();
  let vector: number[];
  try {
    vector = await embedQuery(deps.embeddingModel, query);
  } catch (error) {
    deps.warn(
      { reason: error instanceof Error ? error.message : String(error) },
      'the search query could not be embedded; full-text search alone answers',
    );
    return fullText();
  }
  return hybridSearchKnowledgeBase(deps.db, namespace, knowledgeBaseId, {
    query,
    limit,
    vector,
    vectorSearch: deps.vectorSearch,
  });
}
