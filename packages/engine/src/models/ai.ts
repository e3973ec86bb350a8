import type * as Ai from 'ai';

// The AI SDK (`ai`, with zod: ~150 modules, ~0.3 s of CPU to load) is imported on a run's first model turn, not when
// the engine is: `mt serve` and `mt worker` start without it, and a server that never calls a model never loads it.
let loaded: typeof Ai | undefined;
let loading: Promise<typeof Ai> | undefined;

/** The AI SDK, imported on first use (once per process). */
export function loadAi(): Promise<typeof Ai> {
  loading ??= import('ai').then((ai) => {
    loaded = ai;
    return ai;
  });
  return loading;
}

/** The AI SDK if something imported it already, else undefined (then no error can have come from it). */
export function loadedAi(): typeof Ai | undefined {
  return loaded;
}
