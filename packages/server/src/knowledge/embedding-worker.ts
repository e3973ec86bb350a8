import { chunksToEmbed, type Db, FALLBACK_POLL_MS, storeEmbeddings, type Wakeups, wakeTopics } from '@maitento/store';
import { type EmbeddingModel, embedTexts } from '@maitento/engine';
import { startTurnLoop, type TurnLoop, type TurnLoopOptions } from '../server/turn-loop.js';

/** What the embedding worker logs: a batch that failed (it is tried again after `pollMs`). */
export type EmbeddingWorkerLogger = NonNullable<TurnLoopOptions['logger']>;

/** A running embedding worker: `wake()` looks for passages to embed now; `close()` stops after the batch under way. */
export type EmbeddingWorker = TurnLoop;

/**
 * Embeds the passages of documents in status `embedding`, `batchSize` at a time (one `embedMany` request each),
 * and stores each batch's vectors in one transaction; a document is `ready` once every passage has one. It keeps
 * no state of its own: what is left is what has no vector, so a worker killed mid-batch loses that batch only,
 * and the next one (after a restart) carries on from there. It looks at start, on the `embeddings` wake-up (a document
 * waiting for vectors was stored, by any process), and every `pollMs` only while wake-ups are not listening or after a
 * failed batch (the one fallback rule of docs/architecture.md, "Timers").
 */
export function startEmbeddingWorker(options: {
  db: Db;
  model: EmbeddingModel;
  batchSize?: number;
  /** The process's wake-ups; without them it looks every `pollMs`. */
  wakeups?: Pick<Wakeups, 'on' | 'onLost' | 'listening'>;
  /** The fallback's period (default 2 s). */
  pollMs?: number;
  logger?: EmbeddingWorkerLogger;
}): EmbeddingWorker {
  const batchSize = options.batchSize ?? 64;
  const pollMs = options.pollMs ?? FALLBACK_POLL_MS;
  // One look: batches until none is left. Then none before a wake-up while wake-ups listen, else the fallback's.
  const look = async (closing: () => boolean): Promise<number | undefined> => {
    while (!closing()) {
      const batch = await chunksToEmbed(options.db, batchSize);
      if (batch.length === 0) break;
      const vectors = await embedTexts(
        options.model,
        batch.map((chunk) => chunk.text),
      );
      if (closing()) break;
      await storeEmbeddings(
        options.db,
        batch.map((chunk, i) => ({ documentId: chunk.documentId, position: chunk.position, vector: vectors[i] })),
      );
    }
    return options.wakeups?.listening ? undefined : pollMs;
  };
  // A failed batch: the loop looks again after `pollMs`, until one succeeds.
  return startTurnLoop({
    turn: look,
    wakeups: options.wakeups,
    topic: wakeTopics.embeddings,
    pollMs,
    logger: options.logger,
    failed: 'embedding a batch of passages failed; it is tried again',
  });
}
