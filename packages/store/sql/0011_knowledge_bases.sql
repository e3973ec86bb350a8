-- mt: compatible-from 10 (expand: new tables)
-- Maitento schema, version 11: knowledge bases. A knowledge base belongs to one namespace and has a text search
-- configuration (its language); a document is stored whole as chunks that follow its headings and paragraphs,
-- each chunk with its document, title and position. Chunks are ranked by full-text search on `tsv` (title
-- weighted A, text D), and, with an embedding model, by their `embedding` (a plain real[] searched exactly: no
-- extension needed). A document's `status` says whether its chunks still wait for their vectors.
CREATE TABLE mt_knowledge_bases (
  id uuid PRIMARY KEY,
  namespace text NOT NULL REFERENCES mt_namespaces (name) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  language text NOT NULL DEFAULT 'english',
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (namespace, name)
);

CREATE TABLE mt_kb_documents (
  id uuid PRIMARY KEY,
  knowledge_base_id uuid NOT NULL REFERENCES mt_knowledge_bases (id) ON DELETE CASCADE,
  name text NOT NULL,
  content_type text NOT NULL,
  bytes integer NOT NULL,
  chunk_count integer NOT NULL,
  status text NOT NULL DEFAULT 'ready' CHECK (status IN ('embedding', 'ready')),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (knowledge_base_id, name)
);

CREATE TABLE mt_kb_chunks (
  document_id uuid NOT NULL REFERENCES mt_kb_documents (id) ON DELETE CASCADE,
  knowledge_base_id uuid NOT NULL REFERENCES mt_knowledge_bases (id) ON DELETE CASCADE,
  position integer NOT NULL,
  title text NOT NULL,
  text text NOT NULL,
  tsv tsvector NOT NULL,
  embedding real[],
  PRIMARY KEY (document_id, position)
);
CREATE INDEX mt_kb_chunks_tsv ON mt_kb_chunks USING gin (tsv);
CREATE INDEX mt_kb_chunks_kb ON mt_kb_chunks (knowledge_base_id);
