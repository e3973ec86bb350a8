// The knowledge module: everything about knowledge bases above their rows (the store keeps the rows and the SQL,
// packages/store/src/knowledge). Reading a document (extraction in a worker thread under a budget, chunking), the
// embedding worker that gives passages their vectors, and the search that fuses full-text and vector rankings.
// Routes and the process wiring (server/runtime.ts) reach it through this file only (docs/decisions/0190-...).
export { type ExtractBudget, documentChunks } from './budget.js';
export { type Chunk, chunkText, MAX_CHUNK_CHARS } from './chunk.js';
export { type EmbeddingWorker, type EmbeddingWorkerLogger, startEmbeddingWorker } from './embedding-worker.js';
export { DOCUMENT_TYPES, type DocumentType, documentType, type ExtractLimits } from './extract.js';
export { DEFAULT_SEARCH_LIMIT, type KnowledgeSearchDeps, searchKnowledge } from './search.js';
