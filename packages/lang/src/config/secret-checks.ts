import type { CompileContext } from './compile-context.js';
import { givenTools, reachableAgents } from './interaction-checks.js';
import type { FunctionAuth, Interaction } from './resources.js';
import { spanOf } from './value-tree.js';

/** True when an auth input gives `tool`, as used by `interaction`, its secret (any agent, or the one it names). */
function authFor(interaction: Interaction, tool: string): FunctionAuth | undefined {
  return interaction.inputs.functions.auth.find(
    (a) => a.function === tool && (a.agent === undefined || a.agent === interaction.agent.agent),
  );
}

/**
 * Refuses a tool on a `Header` connector that nothing can give a secret: with no `auth` of its own, every
 * interaction that uses it must declare `inputs.functions.auth` for it, and a tool no interaction uses is refused.
 */
export function checkSecrets(ctx: CompileContext): void {
  for (const { resource: tool, tree } of ctx.tools.values()) {
    const connector = ctx.connectors.get(tool.connector)?.resource;
    if (connector?.auth !== 'Header' || tool.auth !== undefined) continue;
    let users = 0;
    for (const { resource: interaction, tree: itree } of ctx.interactions.values()) {
      const given = givenTools(interaction, ctx);
      const viaOpenApi = interaction.functions.openApi.findIndex((f) => f.ref === tool.name);
      // The agents the interaction's agent hands tasks to: their calls take only the auth inputs naming them.
      for (const sub of reachableAgents(interaction.agent.agent, ctx.agents)) {
        const agent = ctx.agents.get(sub)?.resource;
        if (!agent?.functions.some((f) => 'ref' in f && f.ref === tool.name)) continue;
        users++;
        if (interaction.inputs.functions.auth.some((a) => a.function === tool.name && a.agent === sub)) continue;
        ctx.reporter.report(
          'api:connectors:secret-missing',
          {
            tool: tool.name,
            connector: connector.name,
            detail: `the tool has no auth of its own and the interaction ${interaction.name} gives it no secret for the agent ${sub} (an auth input with agent = @ref("${sub}"))`,
          },
          itree.file,
          spanOf(itree, ['agent', 'agent']),
        );
      }
      if (viaOpenApi < 0 && !given.own?.has(tool.name)) continue;
      users++;
      if (authFor(interaction, tool.name)) continue;
      ctx.reporter.report(
        'api:connectors:secret-missing',
        {
          tool: tool.name,
          connector: connector.name,
          detail: `the tool has no auth of its own and the interaction ${interaction.name} gives it no secret`,
        },
        itree.file,
        spanOf(itree, viaOpenApi >= 0 ? ['functions', 'openApi', viaOpenApi, 'ref'] : ['agent', 'agent']),
      );
    }
    if (users === 0) {
      ctx.reporter.report(
        'api:connectors:secret-missing',
        {
          tool: tool.name,
          connector: connector.name,
          detail: 'the tool has no auth of its own and no interaction gives it a secret',
        },
        tree.file,
        spanOf(tree, ['connector']),
      );
    }
  }
}
