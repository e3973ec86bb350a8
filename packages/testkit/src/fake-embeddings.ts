import { createHash } from 'node:crypto';
import { startRecordingUpstream, type Upstream } from './upstream.js';

/** A fake OpenAI-compatible embeddings endpoint on 127.0.0.1, and what it embedded. */
export interface FakeEmbeddings {
  /** The base URL to give the AI SDK's OpenAI provider (`OPENAI_BASE_URL`): `http://127.0.0.1:PORT/v1`. */
  baseURL: string;
  /** Every text it embedded, request by request. */
  inputs: string[][];
  upstream: Upstream;
  close(): Promise<void>;
}

/**
 * The deterministic embedding of `text`: each word (lower case, a final `s` dropped) adds 1 to a dimension, the
 * dimension of its group when it is in one of `concepts` (so `vacation` and `leave` point the same way without
 * sharing letters), else one picked by a hash of the word among the dimensions after the groups'.
 */
export function fakeEmbedding(text: string, concepts: string[][], dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const raw of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const word = raw.length > 3 ? raw.replace(/s$/, '') : raw;
    const group = concepts.findIndex((words) => words.includes(word));
    const free = dimensions - concepts.length;
    const dim =
      group >= 0 ? group : concepts.length + (createHash('sha256').update(word).digest().readUInt32BE(0) % free);
    vector[dim] += 1;
  }
  return vector;
}

/**
 * Starts an OpenAI-compatible `POST /v1/embeddings` on 127.0.0.1 that answers {@link fakeEmbedding}s, after
 * `delayMs` per request (to stop a worker in the middle of a batch).
 */
export async function startFakeEmbeddings(
  options: { concepts?: string[][]; dimensions?: number; delayMs?: number } = {},
): Promise<FakeEmbeddings> {
  const concepts = options.concepts ?? [];
  const dimensions = options.dimensions ?? 64;
  const inputs: string[][] = [];
  const upstream = await startRecordingUpstream(async (request, res) => {
    const body = JSON.parse(request.body) as { input: string | string[]; model: string };
    const texts = Array.isArray(body.input) ? body.input : [body.input];
    inputs.push(texts);
    if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        object: 'list',
        model: body.model,
        data: texts.map((text, index) => ({
          object: 'embedding',
          index,
          embedding: fakeEmbedding(text, concepts, dimensions),
        })),
        usage: { prompt_tokens: texts.length, total_tokens: texts.length },
      }),
    );
  });
  return { baseURL: `${upstream.origin}/v1`, inputs, upstream, close: () => upstream.close() };
}
