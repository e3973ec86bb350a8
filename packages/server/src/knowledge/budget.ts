import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { MtError } from '@maitento/errors';
import { EXTRACT_MEMORY_CHECK_MS } from '@maitento/store';
import { serverErrors } from '../errors.js';
import { serverRequire } from '../server/package-require.js';
import type { Chunk } from './chunk.js';
import type { DocumentType, ExtractLimits } from './extract.js';
import type { ExtractReply, ExtractRequest } from './extract-worker.js';

/** What reading one uploaded document may take (docs/knowledge-bases.md, "Budgets"). */
export interface ExtractBudget extends ExtractLimits {
  /** Wall time from the document's hand-over to its answer, in ms (`MT_KB_EXTRACT_TIMEOUT`). */
  timeoutMs: number;
  /** Memory the document may add to its thread (heap and buffers: a PDF's inflated streams), in MiB (`MT_KB_EXTRACT_MEMORY`). */
  memoryMb: number;
}

// The compiled thread, found through the package's name (the `mt` executable runs a bundle of this code elsewhere).
const WORKER_FILE = join(
  dirname(serverRequire.resolve('@maitento/server/package.json')),
  'dist',
  'knowledge',
  'extract-worker.js',
);

/**
 * One idle thread kept warm for the next document (loading PDF.js in a fresh thread costs ~0.2 s), with the memory
 * limit it was made with. A thread that went over a budget or failed is terminated, never put back.
 */
let idle: { worker: Worker; memoryMb: number; onExit: () => void } | undefined;

function takeWorker(memoryMb: number): Worker {
  const kept = idle;
  idle = undefined;
  kept?.worker.off('exit', kept.onExit);
  if (kept !== undefined && kept.memoryMb === memoryMb) {
    kept.worker.ref();
    return kept.worker;
  }
  if (kept !== undefined) void kept.worker.terminate();
  // The heap cap is twice the budget: the budget is what one document may add to a thread that may hold garbage
  // of the one before; past the cap V8 collects before it gives up, so the cap is reached only by live memory.
  return new Worker(WORKER_FILE, {
    resourceLimits: { maxOldGenerationSizeMb: memoryMb * 2, maxYoungGenerationSizeMb: 16 },
  });
}

function putBack(worker: Worker, memoryMb: number): void {
  if (idle !== undefined) {
    void worker.terminate();
    return;
  }
  worker.unref();
  // A thread that ends while idle is not handed a document.
  const onExit = () => {
    if (idle?.worker === worker) idle = undefined;
  };
  idle = { worker, memoryMb, onExit };
  worker.once('exit', onExit);
}

async function memoryOf(worker: Worker): Promise<number> {
  const heap = await worker.getHeapStatistics();
  return heap.used_heap_size + heap.external_memory;
}

/**
 * The chunks of an uploaded document, read in a worker thread under `budget`: the memory the document adds to the
 * thread (its heap and its external buffers: PDF.js inflates a stream into an ArrayBuffer, which no heap limit
 * sees) is read every 20 ms and the thread terminated past `memoryMb`, or when `timeoutMs` passes. A document over
 * budget is `api:knowledge:document-too-complex` (422); nothing has been stored by then.
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
  const worker = takeWorker(budget.memoryMb);
  const budgetBytes = budget.memoryMb * 1024 * 1024;
  let over: string | undefined;
  let ended = false;
  const stop = (reason: string) => {
    over ??= reason;
    void worker.terminate();
  };
  const overMemory = `reading it took more than ${budget.memoryMb} MiB of memory`;
  const deadline = setTimeout(() => stop(`reading it took longer than ${budget.timeoutMs / 1000} s`), budget.timeoutMs);
  let watch: NodeJS.Timeout | undefined;
  let listeners: { message: (m: ExtractReply) => void; error: (e: Error) => void; exit: () => void } | undefined;
  // Listening from the start: a thread stopped at its deadline while its memory is first read still answers.
  const replied = new Promise<ExtractReply | undefined>((resolve, reject) => {
    listeners = {
      message: (message: ExtractReply) => resolve(message),
      error: (error: Error & { code?: string }) => {
        if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') stop(overMemory);
        else {
          over ??= 'failed';
          reject(error);
        }
      },
      exit: () => resolve(undefined),
    };
    worker.once('message', listeners.message);
    worker.once('error', listeners.error);
    worker.once('exit', listeners.exit);
  });
  replied.catch(() => {}); // awaited below; a failure before then is not an unhandled rejection
  try {
    // The memory a thread holds before the document (a warm one: PDF.js, garbage of the last document) is not the
    // document's: the budget is counted from there.
    const start = await memoryOf(worker).catch(() => 0);
    let checking = false;
    watch = setInterval(() => {
      if (checking || ended) return;
      checking = true;
      memoryOf(worker)
        .then((used) => {
          if (used - start > budgetBytes) stop(overMemory);
        })
        .catch(() => {}) // the thread has ended: its exit settles the answer
        .finally(() => {
          checking = false;
        });
    }, EXTRACT_MEMORY_CHECK_MS);
    // The copy of the body is handed over, not cloned again.
    if (over === undefined) worker.postMessage(request, [request.body.buffer as ArrayBuffer]);
    const reply = await replied;
    ended = true;
    if (over !== undefined || reply === undefined) {
      throw serverErrors.create('api:knowledge:document-too-complex', { name, reason: over ?? 'its reader stopped' });
    }
    if ('error' in reply) {
      const { code, status, message, hint } = reply.error;
      throw new MtError(code, status, message, hint === undefined ? {} : { hint });
    }
    return reply.chunks;
  } finally {
    ended = true;
    clearTimeout(deadline);
    clearInterval(watch);
    if (listeners !== undefined) {
      worker.off('message', listeners.message);
      worker.off('error', listeners.error);
      worker.off('exit', listeners.exit);
    }
    if (over === undefined) putBack(worker, budget.memoryMb);
    else void worker.terminate();
  }
}
