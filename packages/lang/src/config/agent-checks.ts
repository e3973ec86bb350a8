import { didYouMean } from '../diagnostics/did-you-mean.js';
import type { CompileContext } from './compile-context.js';
import type { Agent, AgentFunction } from './resources.js';
import { didYouMeanText } from './report.js';
import { isTreeObject, spanOf, type ValueTree } from './value-tree.js';

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

/** The name a function entry gives: its tool's, or the agent's it hands tasks to. */
export function functionName(f: AgentFunction): string {
  return 'ref' in f ? f.ref : f.agent;
}

/** The agents an agent may hand a task to (`functions = [{ agent = @ref(...) }]`). */
export function subAgentsOf(agent: Pick<Agent, 'functions'>): string[] {
  return agent.functions.flatMap((f) => ('agent' in f ? [f.agent] : []));
}

/**
 * Checks that an agent's model is one the engine can run, that each function names a tool or an agent (one of
 * them, each once), and that an agent it hands tasks to has a summary (the model's description of it).
 */
export function checkAgent(agent: Agent, tree: ValueTree, ctx: CompileContext): void {
  checkModel(agent, tree, ctx);
  const seen = new Map<string, number>();
  agent.functions.forEach((f, i) => {
    const item = Array.isArray(tree.root.functions) ? tree.root.functions[i] : undefined;
    const both = isTreeObject(item) && item.ref !== undefined && item.agent !== undefined;
    if (both || (isTreeObject(item) && item.ref === undefined && item.agent === undefined)) {
      ctx.reporter.report('mtr:agent:function-target', {}, tree.file, spanOf(tree, ['functions', i]));
      return;
    }
    const key = 'ref' in f ? 'ref' : 'agent';
    const name = functionName(f);
    if ('agent' in f) {
      const target = ctx.agents.get(f.agent)?.resource;
      if (target !== undefined && (target.summary ?? '').trim() === '') {
        ctx.reporter.report('mtr:agent:summary-missing', { agent: f.agent }, tree.file, spanOf(tree, ['functions', i]));
      }
    }
    const first = seen.get(name);
    if (first === undefined) {
      seen.set(name, i);
      return;
    }
    ctx.reporter.report(
      'mtr:names:duplicate',
      { what: 'functions', name, line: spanOf(tree, ['functions', first]).start.line },
      tree.file,
      spanOf(tree, ['functions', i, key]),
    );
  });
}

/**
 * Refuses agents that hand tasks to each other in a cycle (`a` → `b` → `a`, or an agent naming itself): each cycle
 * is reported once, at the entry of its first agent (by name) that names the next one, with the whole cycle.
 */
export function checkAgentCycles(ctx: CompileContext): void {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const reported = new Set<string>();
  const visit = (name: string): void => {
    state.set(name, 'open');
    path.push(name);
    const agent = ctx.agents.get(name)?.resource;
    for (const next of agent ? subAgentsOf(agent) : []) {
      if (state.get(next) === 'open') {
        const cycle = path.slice(path.indexOf(next));
        // The same cycle from its first agent by name, so it is named (and reported) once.
        const at = cycle.indexOf([...cycle].sort()[0]!);
        const ordered = [...cycle.slice(at), ...cycle.slice(0, at)];
        const key = ordered.join('\u0000');
        if (reported.has(key)) continue;
        reported.add(key);
        const from = ctx.agents.get(ordered[0]!);
        if (from === undefined) continue;
        const to = ordered[1] ?? ordered[0]!;
        const index = from.resource.functions.findIndex((f) => 'agent' in f && f.agent === to);
        ctx.reporter.report(
          'mtr:agent:cycle',
          { cycle: [...ordered, ordered[0]].join(' -> ') },
          from.tree.file,
          spanOf(from.tree, ['functions', index, 'agent']),
        );
      } else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(name, 'done');
  };
  for (const name of [...ctx.agents.keys()].sort()) if (!state.has(name)) visit(name);
}
