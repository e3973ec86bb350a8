import { chunksToEmbed, type Db, FALLBACK_POLL_MS, storeEmbeddings, type Wakeups, wakeTopics } from '@maitento/store';
import { type EmbeddingModel, embedTexts } from '@maitento/engine';

/** What the embedding worker logs: a batch that failed (it is tried again after `pollMs`). */
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
 * and the next one (after a restart) carries on from there. It looks at start, on the `embeddings` wake-up (a document
 * waiting for vectors was stored, by any process), and every `pollMs` only while wake-ups are not listening or after a
 * failed batch (the one fallback rule of docs/architecture.md, "Timers").
 */
export function startEmbeddingWorker(options: {
  db: Db;
  model: EmbeddingModel;
  batchSize?: number;
  /** The process's wake-ups; without them it looks every `pollMs`. */
  wakeups?: Pick<Wakeups, 'on' | 'listening'>;
  /** The fallback's period (default 2 s). */
  pollMs?: number;
  logger?: EmbeddingWorkerLogger;
}): EmbeddingWorker {
  const batchSize = options.batchSize ?? 64;
  const pollMs = options.pollMs ?? FALLBACK_POLL_MS;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  // Woken while a look was under way: look again after it. A failed batch: the fallback looks until one succeeds.
  let again = false;
  let failed = false;

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
  // The fallback: a look (a statement) only while wake-ups are not listening or after a failed batch.
  const poll = () => {
    if (!failed && options.wakeups?.listening) return schedule(pollMs, poll);
    run();
  };
  const schedule = (delay: number, fn: () => void) => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(fn, delay);
  };
  const run = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    again = false;
    running = tick()
      .then(
        () => {
          failed = false;
        },
        (error: unknown) => {
          failed = true;
          options.logger?.warn(
            { reason: error instanceof Error ? error.message : String(error) },
            'embedding a batch of passages failed; it is tried again',
          );
        },
      )
      .finally(() => {
        running = undefined;
        if (again && !failed) schedule(0, run);
        else schedule(pollMs, poll);
      });
  };
  const off = options.wakeups?.on(wakeTopics.embeddings, run);
  schedule(0, run);
  return {
    wake: run,
    async close() {
      stopped = true;
      off?.();
      clearTimeout(timer);
      await running;
    },
  };
}
