import { parentPort, workerData } from 'node:worker_threads';
import { type ExtractLimits, extractChunks } from './extract.js';
import type { DocumentType } from './extract.js';

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

// The thread a document is read in (knowledge/budget.ts starts it): the server's own event loop and heap stay out of
// reach of the document, and the thread is terminated at its deadline or memory budget.
const request = workerData as ExtractRequest;
let reply: ExtractReply;
try {
  reply = { chunks: await extractChunks(request.name, request.type, Buffer.from(request.body), request.limits) };
} catch (error) {
  const e = error as { code?: unknown; status?: unknown; message?: unknown; hint?: unknown };
  if (typeof e.code === 'string' && e.code.startsWith('api:') && typeof e.status === 'number') {
    reply = {
      error: {
        code: e.code,
        status: e.status,
        message: String(e.message),
        ...(typeof e.hint === 'string' ? { hint: e.hint } : {}),
      },
    };
  } else throw error;
}
parentPort?.postMessage(reply);
