import { isMtError, type MtError } from '@maitento/errors';
import { engineErrors } from '../errors.js';
import { loadedAi } from './ai.js';

function short(text: string | undefined, max = 300): string {
  const flat = (text ?? '').replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** Turns what `generateText` threw into the run's failure: unreachable, an error status, or an unreadable answer. */
export function classifyModelError(model: string, error: unknown): MtError {
  if (isMtError(error)) return error;
  // The AI SDK's errors come from a model call, which loaded it; before one, nothing here is one of them.
  const ai = loadedAi();
  let cause = error;
  if (ai?.RetryError.isInstance(cause)) cause = cause.lastError;
  if (ai?.LoadAPIKeyError.isInstance(cause)) {
    return engineErrors.create('api:models:not-configured', {
      provider: model.split(':')[0],
      missing: 'its API key',
    });
  }
  if (ai?.APICallError.isInstance(cause)) {
    if (cause.statusCode !== undefined) {
      // A 2xx whose body could not be read is a garbage answer, not an error status.
      if (cause.statusCode >= 200 && cause.statusCode < 300) {
        return engineErrors.create('api:models:invalid-response', { model, detail: short(cause.message) });
      }
      return engineErrors.create('api:models:error', {
        model,
        status: cause.statusCode,
        detail: short(cause.responseBody || cause.message),
      });
    }
    return engineErrors.create('api:models:unreachable', { model, detail: short(cause.message) });
  }
  const message = cause instanceof Error ? cause.message : String(cause);
  return engineErrors.create('api:models:invalid-response', { model, detail: short(message) });
}
