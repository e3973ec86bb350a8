import { MODEL_PROVIDERS } from '@maitento/lang';
import type { LanguageModel } from 'ai';
import { envText as env } from '../engine/settings.js';
import { engineErrors } from '../errors.js';
import { scriptedModel } from './scripted.js';

/** A model the engine can call, and whether it is the scripted stand-in. */
export interface ResolvedModel {
  model: LanguageModel;
  scripted: boolean;
}

/**
 * Turns an agent's `provider:name` into a model; throws `api:models:*` errors for what cannot run. May answer with a
 * promise: the default resolver imports a provider's package on its first use.
 */
export type ModelResolver = (spec: string) => ResolvedModel | Promise<ResolvedModel>;

/** Splits `provider:name` at the first colon. */
export function parseModelSpec(spec: string): { provider: string; name: string } {
  const at = spec.indexOf(':');
  return at < 0 ? { provider: spec, name: '' } : { provider: spec.slice(0, at), name: spec.slice(at + 1) };
}

// A local server (vLLM, Ollama, llama.cpp) behind a base URL often wants no key; the SDK wants one.
function apiKey(provider: string, keyVar: string, baseVar: string): string {
  const key = env(keyVar);
  if (key !== undefined) return key;
  if (env(baseVar) !== undefined) return 'not-needed';
  throw engineErrors.create('api:models:not-configured', { provider, missing: keyVar });
}

/**
 * The setting the default resolver would miss for `spec` in this process's environment (`OPENAI_API_KEY`,
 * `ANTHROPIC_API_KEY`, `OPENAI_COMPATIBLE_BASE_URL`), or undefined when it has what it needs (or the provider is
 * unknown, refused elsewhere). A deploy warns with it: the key may be added before a run needs it.
 */
export function missingModelSetting(spec: string): string | undefined {
  const { provider } = parseModelSpec(spec);
  const keyed = (keyVar: string, baseVar: string) =>
    env(keyVar) === undefined && env(baseVar) === undefined ? keyVar : undefined;
  switch (provider) {
    case 'openai':
      return keyed('OPENAI_API_KEY', 'OPENAI_BASE_URL');
    case 'anthropic':
      return keyed('ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL');
    case 'openai-compatible':
      return env('OPENAI_COMPATIBLE_BASE_URL') === undefined ? 'OPENAI_COMPATIBLE_BASE_URL' : undefined;
    default:
      return undefined;
  }
}

/**
 * The default resolver: reads the environment at each call, so a worker picks up keys without code. The settings
 * are read (and a missing one refused) at once; the provider's package (~0.1 s of CPU each with the AI SDK's
 * shared code) is imported when a run first uses it, not when the engine is.
 * `scriptsDir` is where `scripted:NAME` finds NAME.json (default `MT_SCRIPTED_MODELS` or ./scripted-models).
 */
export function modelsFromEnvironment(options: { scriptsDir?: string } = {}): ModelResolver {
  return (spec) => {
    const { provider, name } = parseModelSpec(spec);
    switch (provider) {
      case 'openai': {
        const settings = {
          baseURL: env('OPENAI_BASE_URL'),
          apiKey: apiKey('openai', 'OPENAI_API_KEY', 'OPENAI_BASE_URL'),
        };
        return import('@ai-sdk/openai').then(({ createOpenAI }) => ({
          model: createOpenAI(settings).chat(name),
          scripted: false,
        }));
      }
      case 'openai-compatible': {
        const baseURL = env('OPENAI_COMPATIBLE_BASE_URL');
        if (baseURL === undefined) {
          throw engineErrors.create('api:models:not-configured', {
            provider,
            missing: 'OPENAI_COMPATIBLE_BASE_URL',
          });
        }
        const settings = { name: 'openai-compatible', baseURL, apiKey: env('OPENAI_COMPATIBLE_API_KEY') };
        return import('@ai-sdk/openai-compatible').then(({ createOpenAICompatible }) => ({
          model: createOpenAICompatible(settings).chatModel(name),
          scripted: false,
        }));
      }
      case 'anthropic': {
        const settings = {
          baseURL: env('ANTHROPIC_BASE_URL'),
          apiKey: apiKey('anthropic', 'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL'),
        };
        return import('@ai-sdk/anthropic').then(({ createAnthropic }) => ({
          model: createAnthropic(settings)(name),
          scripted: false,
        }));
      }
      case 'scripted':
        return {
          model: scriptedModel(name, options.scriptsDir ?? env('MT_SCRIPTED_MODELS') ?? './scripted-models'),
          scripted: true,
        };
      default:
        throw engineErrors.create('api:models:unknown-provider', {
          model: spec,
          provider,
          known: MODEL_PROVIDERS.join(', '),
        });
    }
  };
}
