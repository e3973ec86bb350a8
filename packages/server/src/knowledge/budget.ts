import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { MtError } from '@maitento/errors';
import { serverErrors } from '../errors.js';
import { serverRequire } from '../internal/package-require.js';
import type { Chunk } from './chunk.js';
import type { DocumentType, ExtractLimits } from './extract.js';
import type { ExtractReply, ExtractRequest } from './extract-worker.js';

/** What reading one uploaded document may take (docs/knowledge-bases.md, "Budgets"). */
export interface ExtractBudget extends ExtractLimits {
  /** Wall time from the thread's start to its answer, in ms (`MT_KB_EXTRACT_TIMEOUT`). */
  timeoutMs: number;
  /** Memory of the thread (its heap and its buffers, a PDF's decoded streams among them), in MiB (`MT_KB_EXTRACT_MEMORY`). */
  memoryMb: number;
}

/** How often the thread's memory is read while it works. */
const MEMORY_CHECK_MS = 20;

// The compiled thread, found through the package's name (the `mt` executable runs a bundle of this code elsewhere).
const WORKER_FILE = join(
  dirname(serverRequire.resolve('@maitento/server/package.json')),
  'dist',
  'knowledge',
  'extract-worker.js',
);

/**
 * The chunks of an uploaded document, read in a worker thread of its own under `budget`: the thread's heap is capped
 * by `resourceLimits`, its whole memory (heap and external buffers: pdf.js decodes a stream into a Uint8Array, which
 * no heap limit sees) is read every 20 ms, and the thread is terminated when it passes `memoryMb` or `timeoutMs`
 * passes. A document over budget is `api:knowledge:document-too-complex` (422); nothing has been stored by then.
 */
export async function documentChunks(
  name: string,
  type: DocumentType,
  body: Buffer,
  budget: ExtractBudget,
): Promise<Chunk[]> {
  const request: ExtractRequest = {
    name,
    type,
    body: new Uint8Array(body),
    limits: { pages: budget.pages, textChars: budget.textChars },
  };
  const worker = new Worker(WORKER_FILE, {
    workerData: request,
    resourceLimits: { maxOldGenerationSizeMb: budget.memoryMb, maxYoungGenerationSizeMb: 16 },
  });
  const budgetBytes = budget.memoryMb * 1024 * 1024;
  let over: string | undefined;
  const stop = (reason: string) => {
    over ??= reason;
    void worker.terminate();
  };
  const deadline = setTimeout(() => stop(`reading it took longer than ${budget.timeoutMs / 1000} s`), budget.timeoutMs);
  let checking = false;
  const watch = setInterval(() => {
    if (checking) return;
    checking = true;
    worker
      .getHeapStatistics()
      .then((heap) => {
        const used = heap.used_heap_size + heap.external_memory;
        if (used > budgetBytes) stop(`reading it took more than ${budget.memoryMb} MiB of memory`);
      })
      .catch(() => {}) // the thread has ended: its exit settles the answer
      .finally(() => {
        checking = false;
      });
  }, MEMORY_CHECK_MS);
  try {
    const reply = await new Promise<ExtractReply | undefined>((resolve, reject) => {
      worker.once('message', (message: ExtractReply) => resolve(message));
      worker.once('error', (error: Error & { code?: string }) => {
        if (error.code === 'ERR_WORKER_OUT_OF_MEMORY')
          stop(`reading it took more than ${budget.memoryMb} MiB of memory`);
        else reject(error);
      });
      worker.once('exit', () => resolve(undefined));
    });
    if (over !== undefined || reply === undefined) {
      throw serverErrors.create('api:knowledge:document-too-complex', { name, reason: over ?? 'its reader stopped' });
    }
    if ('error' in reply) {
      const { code, status, message, hint } = reply.error;
      throw new MtError(code, status, message, hint === undefined ? {} : { hint });
    }
    return reply.chunks;
  } finally {
    clearTimeout(deadline);
    clearInterval(watch);
    void worker.terminate();
  }
}
