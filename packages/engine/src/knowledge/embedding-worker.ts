import { chunksToEmbed, type Db, EMBEDDING_POLL_MS, storeEmbeddings } from '@maitento/store';
import type { EmbeddingModel } from 'ai';
import { embedTexts } from './embedding-model.js';

/** What the embedding worker logs: a batch that failed (it is tried again at the next poll). */
export interface EmbeddingWorkerLogger {
  warn(obj: object, msg: string): void;
}

/** A running embedding worker. */
export interface EmbeddingWorker {
  /** Looks for passages to embed now rather than at the next poll. */
  wake(): void;
  /** Stops after the batch under way. */
  close(): Promise<void>;
}

/**
 * Embeds the passages of documents in status `embedding`, `batchSize` at a time (one `embedMany` request each),
 * and stores each batch's vectors in one transaction; a document is `ready` once every passage has one. It keeps
 * no state of its own: what is left is what has no vector, so a worker killed mid-batch loses that batch only,
 * and the next one (after a restart) carries on from there.
 */
export function startEmbeddingWorker(options: {
  db: Db;
  model: EmbeddingModel;
  batchSize?: number;
  /** How often it looks when idle (default 1 s). */
  pollMs?: number;
  logger?: EmbeddingWorkerLogger;
}): EmbeddingWorker {
  const batchSize = options.batchSize ?? 64;
  const pollMs = options.pollMs ?? EMBEDDING_POLL_MS;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  const tick = async () => {
    while (!stopped) {
      const batch = await chunksToEmbed(options.db, batchSize);
      if (batch.length === 0) return;
      const vectors = await embedTexts(
        options.model,
        batch.map((chunk) => chunk.text),
      );
      if (stopped) return;
      await storeEmbeddings(
        options.db,
        batch.map((chunk, i) => ({ documentId: chunk.documentId, position: chunk.position, vector: vectors[i] })),
      );
    }
  };
  const schedule = (delay: number) => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(run, delay);
  };
  const run = () => {
    if (running || stopped) return;
    running = tick()
      .catch((error: unknown) => {
        options.logger?.warn(
          { reason: error instanceof Error ? error.message : String(error) },
          'embedding a batch of passages failed; it is tried again',
        );
      })
      .finally(() => {
        running = undefined;
        schedule(pollMs);
      });
  };
  schedule(0);
  return {
    wake: () => schedule(0),
    async close() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
