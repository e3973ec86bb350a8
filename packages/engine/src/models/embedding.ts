import type { EmbeddingModel } from 'ai';
import { envText as env } from '../engine/settings.js';
import { engineErrors } from '../errors.js';
import { loadAi } from './ai.js';
import { parseModelSpec } from './resolve.js';

/**
 * The embedding model of `MT_EMBEDDING_MODEL` (`openai:NAME` through OPENAI_BASE_URL / OPENAI_API_KEY,
 * `openai-compatible:NAME` through OPENAI_COMPATIBLE_BASE_URL), or undefined when it is unset: knowledge bases
 * then rank by full-text search alone, a mode of its own, not an error. Asynchronous because the provider's package
 * is imported here, only when one is configured (`mt serve` otherwise starts without the AI SDK).
 */
export async function embeddingModelFromEnv(): Promise<EmbeddingModel | undefined> {
  const spec = env('MT_EMBEDDING_MODEL');
  if (spec === undefined) return undefined;
  const { provider, name } = parseModelSpec(spec);
  if (provider === 'openai') {
    const apiKey = env('OPENAI_API_KEY') ?? (env('OPENAI_BASE_URL') !== undefined ? 'not-needed' : undefined);
    if (apiKey === undefined)
      throw engineErrors.create('api:models:not-configured', { provider, missing: 'OPENAI_API_KEY' });
    const { createOpenAI } = await import('@ai-sdk/openai');
    return createOpenAI({ baseURL: env('OPENAI_BASE_URL'), apiKey }).embedding(name);
  }
  if (provider === 'openai-compatible') {
    const baseURL = env('OPENAI_COMPATIBLE_BASE_URL');
    if (baseURL === undefined) {
      throw engineErrors.create('api:models:not-configured', { provider, missing: 'OPENAI_COMPATIBLE_BASE_URL' });
    }
    const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
    return createOpenAICompatible({ name: provider, baseURL, apiKey: env('OPENAI_COMPATIBLE_API_KEY') }).embeddingModel(
      name,
    );
  }
  throw engineErrors.create('api:models:unknown-provider', {
    model: spec,
    provider,
    known: 'openai, openai-compatible',
  });
}

/** `vector` scaled to length 1, so a dot product of two is their cosine. */
export function unit(vector: number[]): number[] {
  const length = Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0));
  return length === 0 ? vector : vector.map((x) => x / length);
}

/** The unit embeddings of `texts`, in order, in one request of the AI SDK's `embedMany`. */
export async function embedTexts(model: EmbeddingModel, texts: string[]): Promise<number[][]> {
  const { embedMany } = await loadAi();
  const { embeddings } = await embedMany({ model, values: texts, maxRetries: 2 });
  return embeddings.map(unit);
}

/** The unit embedding of one search query. */
export async function embedQuery(model: EmbeddingModel, query: string): Promise<number[]> {
  const { embed } = await loadAi();
  const { embedding } = await embed({ model, value: query, maxRetries: 1 });
  return unit(embedding);
}
