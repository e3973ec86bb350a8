import { didYouMean } from '../diagnostics/did-you-mean.js';
import type { CompileContext } from './compile-context.js';
import type { Agent } from './resources.js';
import { didYouMeanText } from './report.js';
import { spanOf, type ValueTree } from './value-tree.js';

/** The model providers an agent's `model = "provider:name"` may name, the ones the engine can run. */
export const MODEL_PROVIDERS = ['openai', 'anthropic', 'openai-compatible', 'scripted'] as const;

/** A model provider the engine can run. */
export type ModelProvider = (typeof MODEL_PROVIDERS)[number];

/** An agent's `model` split into its provider and the provider's model name. */
export interface ModelRef {
  provider: ModelProvider;
  name: string;
}

/**
 * Splits `provider:name` at its first colon (a name may hold more, as Ollama's `llama3.1:8b` does); undefined
 * when the provider is not one of {@link MODEL_PROVIDERS} or the name is empty or holds white space.
 */
export function parseModel(model: string): ModelRef | undefined {
  const colon = model.indexOf(':');
  if (colon < 0) return undefined;
  const provider = model.slice(0, colon);
  const name = model.slice(colon + 1);
  if (!(MODEL_PROVIDERS as readonly string[]).includes(provider) || name === '' || /\s/.test(name)) return undefined;
  return { provider: provider as ModelProvider, name };
}

function checkModel(agent: Agent, tree: ValueTree, ctx: CompileContext): void {
  if (parseModel(agent.model) !== undefined) return;
  const span = spanOf(tree, ['model']);
  const colon = agent.model.indexOf(':');
  const provider = colon < 0 ? '' : agent.model.slice(0, colon);
  const name = colon < 0 ? '' : agent.model.slice(colon + 1);
  if (colon > 0 && name !== '' && !/\s/.test(name)) {
    const guess = didYouMean(provider, MODEL_PROVIDERS);
    ctx.reporter.report(
      'mtr:agent:model-unknown',
      { model: JSON.stringify(agent.model), provider, suggestion: guess ? `${didYouMeanText(guess)} ` : '' },
      tree.file,
      span,
    );
    return;
  }
  ctx.reporter.report('mtr:agent:model-invalid', { model: JSON.stringify(agent.model) }, tree.file, span);
}

/** Checks that an agent's model is one the engine can run and that it lists each tool once. */
export function checkAgent(agent: Agent, tree: ValueTree, ctx: CompileContext): void {
  checkModel(agent, tree, ctx);
  const seen = new Map<string, number>();
  agent.functions.forEach((f, i) => {
    const first = seen.get(f.ref);
    if (first === undefined) {
      seen.set(f.ref, i);
      return;
    }
    ctx.reporter.report(
      'mtr:names:duplicate',
      { what: 'functions', name: f.ref, line: spanOf(tree, ['functions', first, 'ref']).start.line },
      tree.file,
      spanOf(tree, ['functions', i, 'ref']),
    );
  });
}
