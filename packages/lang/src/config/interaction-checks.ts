import { checkLimit } from './limit-checks.js';
import { didYouMean } from '../diagnostics/did-you-mean.js';
import {
  bindableTargets,
  type CompileContext,
  missingTargetDetail,
  overlaps,
  targetsUnknown,
} from './compile-context.js';
import { subAgentsOf } from './agent-checks.js';
import type { Agent, FunctionAuth, FunctionBinding, Interaction } from './resources.js';
import { didYouMeanText, spanInString } from './report.js';
import { isTreeObject, rawOf, spanOf, type TreeValue, type ValueTree } from './value-tree.js';

const PLACEHOLDER = /%%([^%\s]*)%%/g;

/** The tools an interaction gives out: to every agent (`functions.openApi`) and through its agent's own functions. */
export function givenTools(interaction: Interaction, ctx: CompileContext): { openApi: Set<string>; own?: Set<string> } {
  const agent = ctx.agents.get(interaction.agent.agent)?.resource;
  return {
    openApi: new Set(interaction.functions.openApi.map((f) => f.ref)),
    own: agent ? new Set(agent.functions.flatMap((f) => ('ref' in f ? [f.ref] : []))) : undefined,
  };
}

/** The agents `main` hands tasks to, directly or through others (never `main` itself). */
export function reachableAgents(main: string, agents: ReadonlyMap<string, { resource: Agent }>): Set<string> {
  const found = new Set<string>();
  const walk = (name: string) => {
    for (const next of subAgentsOf(agents.get(name)?.resource ?? { functions: [] })) {
      if (next === main || found.has(next)) continue;
      found.add(next);
      walk(next);
    }
  };
  walk(main);
  return found;
}

function checkPlaceholders(tree: ValueTree, declared: string[], ctx: CompileContext): void {
  const walk = (value: TreeValue, path: (string | number)[]): void => {
    if (typeof value === 'string') {
      if (!value.includes('%%')) return;
      const counts = new Map<string, number>();
      for (const match of value.matchAll(PLACEHOLDER)) {
        const name = match[1];
        const occurrence = counts.get(match[0]) ?? 0;
        counts.set(match[0], occurrence + 1);
        if (declared.includes(name)) continue;
        const guess = didYouMean(name, declared);
        ctx.reporter.report(
          'mtr:placeholder:undeclared',
          {
            name,
            suggestion: guess
              ? didYouMeanText(guess)
              : `declare it in inputs.prompts: { name = "${name}" description = "..." required = true }`,
          },
          tree.file,
          spanInString(spanOf(tree, path), rawOf(tree, path), match[0], occurrence),
        );
      }
    } else if (Array.isArray(value))
      value.forEach((v, i) => {
        walk(v, [...path, i]);
      });
    else if (isTreeObject(value)) for (const [k, v] of Object.entries(value)) walk(v, [...path, k]);
  };
  walk(tree.root, []);
}

function checkInputNames(interaction: Interaction, tree: ValueTree, ctx: CompileContext): void {
  const seen = new Map<string, { kind: string; path: (string | number)[] }>();
  const visit = (name: string, kind: string, path: (string | number)[]) => {
    const first = seen.get(name);
    // One run input may feed several tools, so bindings may share a name with each other.
    if (first === undefined) seen.set(name, { kind, path });
    else if (!(first.kind === 'binding' && kind === 'binding')) {
      ctx.reporter.report(
        'mtr:names:duplicate',
        { what: 'run inputs', name, line: spanOf(tree, first.path).start.line },
        tree.file,
        spanOf(tree, path),
      );
    }
  };
  interaction.inputs.prompts.forEach((p, i) => {
    visit(p.name, 'prompt', ['inputs', 'prompts', i, 'name']);
  });
  interaction.inputs.functions.binding.forEach((b, i) => {
    visit(b.name, 'binding', ['inputs', 'functions', 'binding', i, 'name']);
  });
  interaction.inputs.functions.auth.forEach((a, i) => {
    visit(a.name, 'auth', ['inputs', 'functions', 'auth', i, 'name']);
  });
  const refs = new Map<string, number>();
  interaction.functions.openApi.forEach((f, i) => {
    const first = refs.get(f.ref);
    if (first === undefined) refs.set(f.ref, i);
    else {
      ctx.reporter.report(
        'mtr:names:duplicate',
        {
          what: 'functions.openApi entries',
          name: f.ref,
          line: spanOf(tree, ['functions', 'openApi', first]).start.line,
        },
        tree.file,
        spanOf(tree, ['functions', 'openApi', i, 'ref']),
      );
    }
  });
}

/** Checks that the tool of a binding or auth input is given by the interaction, to the agent it names. */
function checkScope(
  interaction: Interaction,
  entry: FunctionBinding | FunctionAuth,
  what: string,
  path: (string | number)[],
  tree: ValueTree,
  ctx: CompileContext,
): void {
  const given = givenTools(interaction, ctx);
  const main = interaction.agent.agent;
  const tool = entry.function;
  if (entry.agent !== undefined) {
    const sub = entry.agent !== main ? ctx.agents.get(entry.agent)?.resource : undefined;
    if (sub !== undefined && reachableAgents(main, ctx.agents).has(entry.agent)) {
      // For an agent the interaction's agent hands tasks to: only that agent's own tools (its child runs').
      if (!sub.functions.some((f) => 'ref' in f && f.ref === tool)) {
        ctx.reporter.report(
          'mtr:binding:function-not-given',
          { what, tool, whom: `the agent ${entry.agent}` },
          tree.file,
          spanOf(tree, [...path, 'function']),
        );
      }
    } else if (entry.agent !== main) {
      ctx.reporter.report(
        'mtr:binding:function-not-given',
        { what, tool, whom: `the agent ${entry.agent}; the interaction's agent is ${main}` },
        tree.file,
        spanOf(tree, [...path, 'agent']),
      );
    } else if (!given.openApi.has(tool) && given.own && !given.own.has(tool)) {
      ctx.reporter.report(
        'mtr:binding:function-not-given',
        { what, tool, whom: `the agent ${main}` },
        tree.file,
        spanOf(tree, [...path, 'function']),
      );
    }
    return;
  }
  if (given.openApi.has(tool) || !given.own) return;
  if (given.own.has(tool)) {
    ctx.reporter.report('mtr:binding:agent-required', { what, tool, agent: main }, tree.file, spanOf(tree, path));
  } else {
    ctx.reporter.report(
      'mtr:binding:function-not-given',
      { what, tool, whom: 'any agent' },
      tree.file,
      spanOf(tree, [...path, 'function']),
    );
  }
}

function checkBindingTargets(interaction: Interaction, tree: ValueTree, ctx: CompileContext): void {
  const bindings = interaction.inputs.functions.binding;
  bindings.forEach((b, i) => {
    const path = ['inputs', 'functions', 'binding', i];
    const targetSpan = () => spanOf(tree, [...path, 'target']);
    const tool = ctx.tools.get(b.function)?.resource;
    if (!tool) return;
    const connector = ctx.connectors.get(tool.connector)?.resource;
    if (connector && !targetsUnknown(connector, b.type)) {
      const known = bindableTargets(connector, b.type);
      if (!known.includes(b.target)) {
        const guess = didYouMean(b.target, known);
        const mcpHint =
          connector.mcp !== undefined && b.type !== 'request'
            ? `write type = "request" to fill an argument of the MCP tool`
            : '';
        ctx.reporter.report(
          'mtr:binding:unknown-target',
          {
            target: `${b.type} ${b.target}`,
            detail: missingTargetDetail(connector, b.type, b.target),
            suggestion: guess ? didYouMeanText(guess) : known.length ? `it may bind ${known.join(', ')}` : mcpHint,
          },
          tree.file,
          targetSpan(),
        );
        return;
      }
    }
    const fixed = Object.keys(tool.bindings[b.type]).find((t) => overlaps(t, b.target));
    if (fixed !== undefined) {
      ctx.reporter.report(
        'mtr:binding:conflict',
        { name: b.name, target: `bindings.${b.type}:${fixed}`, tool: tool.name },
        tree.file,
        targetSpan(),
      );
    }
    const earlier = bindings
      .slice(0, i)
      .find(
        (o) =>
          o.function === b.function &&
          o.type === b.type &&
          overlaps(o.target, b.target) &&
          (o.agent === undefined || b.agent === undefined || o.agent === b.agent),
      );
    if (earlier) {
      ctx.reporter.report(
        'mtr:binding:duplicate',
        {
          target: `${b.type} ${b.target}`,
          tool: tool.name,
          first: `the input ${earlier.name}`,
          second: `the input ${b.name}`,
        },
        tree.file,
        targetSpan(),
      );
    }
  });
}

/** A budget limits tokens (a whole number, 1 or more), cost (more than 0 USD), or both; not neither. */
function checkBudget(interaction: Interaction, tree: ValueTree, ctx: CompileContext): void {
  const budget = interaction.budget;
  if (budget === undefined) return;
  const wrong = (key: string, expected: string, actual: string) =>
    ctx.reporter.report(
      'mtr:property:type',
      { key: `budget.${key}`, expected, actual },
      tree.file,
      spanOf(tree, key === '' ? ['budget'] : ['budget', key]),
    );
  if (budget.tokens !== undefined && !(Number.isSafeInteger(budget.tokens) && budget.tokens >= 1)) {
    wrong('tokens', 'a whole number of tokens, 1 or more', String(budget.tokens));
  }
  if (budget.costUsd !== undefined && !(Number.isFinite(budget.costUsd) && budget.costUsd > 0)) {
    wrong('costUsd', 'an amount of US dollars above 0', String(budget.costUsd));
  }
  if (budget.tokens === undefined && budget.costUsd === undefined) {
    ctx.reporter.report(
      'mtr:property:type',
      { key: 'budget', expected: 'tokens, costUsd or both', actual: 'neither' },
      tree.file,
      spanOf(tree, ['budget']),
    );
  }
}

/** Checks an interaction: placeholders, run-input names, which agent each binding and auth input is for, binding targets. */
export function checkInteraction(interaction: Interaction, tree: ValueTree, ctx: CompileContext): void {
  const declared = [
    ...interaction.inputs.prompts.map((p) => p.name),
    ...interaction.inputs.functions.binding.map((b) => b.name),
    ...interaction.inputs.functions.auth.map((a) => a.name),
  ];
  checkPlaceholders(tree, declared, ctx);
  checkInputNames(interaction, tree, ctx);
  checkBudget(interaction, tree, ctx);
  checkLimit(interaction.limit, tree, ctx.reporter, 'starts');
  interaction.inputs.functions.binding.forEach((b, i) => {
    checkScope(interaction, b, 'binding', ['inputs', 'functions', 'binding', i], tree, ctx);
  });
  interaction.inputs.functions.auth.forEach((a, i) => {
    checkScope(interaction, a, 'auth input', ['inputs', 'functions', 'auth', i], tree, ctx);
  });
  checkBindingTargets(interaction, tree, ctx);
}
