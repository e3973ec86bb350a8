import { parentPort } from 'node:worker_threads';
import { type DocumentType, type ExtractLimits, extractChunks } from './extract.js';

/** What the server hands the extraction thread: one document and the limits it is read under. */
export interface ExtractRequest {
  name: string;
  type: DocumentType;
  body: Uint8Array;
  limits: ExtractLimits;
}

/** The thread's answer: the chunks, or an error of the registry (code, status, message, hint). */
export type ExtractReply =
  | { chunks: { title: string; text: string }[] }
  | { error: { code: string; status: number; message: string; hint?: string } };

async function answer(request: ExtractRequest): Promise<ExtractReply> {
  try {
    return { chunks: await extractChunks(request.name, request.type, Buffer.from(request.body), request.limits) };
  } catch (error) {
    const e = error as { code?: unknown; status?: unknown; message?: unknown; hint?: unknown };
    if (typeof e.code === 'string' && e.code.startsWith('api:') && typeof e.status === 'number') {
      const hint = typeof e.hint === 'string' ? { hint: e.hint } : {};
      return { error: { code: e.code, status: e.status, message: String(e.message), ...hint } };
    }
    throw error;
  }
}

// The thread documents are read in (knowledge/budget.ts starts it and hands it one document at a time): the
// server's own event loop and heap stay out of a document's reach, and the thread is terminated at its deadline or
// memory budget. An unexpected error ends the thread (its `error` event), so a thread in doubt is never reused.
parentPort?.on('message', (request: ExtractRequest) => {
  answer(request).then(
    (reply) => parentPort?.postMessage(reply),
    (error) => {
      setImmediate(() => {
        throw error;
      });
    },
  );
});
