import type { Agent, Connector, Interaction, Tool, ToolDefinition } from './resources.js';
import { type RunBound, toolDefinition } from './tool-definition.js';

/** One tool as an agent of an interaction sees it. */
export interface InteractionTool {
  tool: Tool;
  connector: Connector;
  definition: ToolDefinition;
}

/** An agent another agent may hand a task to, as the model sees it: a tool taking one `task` string. */
export interface SubAgentTool {
  /** The agent's name (the child run plays it). */
  agent: string;
  definition: ToolDefinition;
}

/** The tools one agent of an interaction is given, with their model-facing definitions for that interaction. */
export interface InteractionAgentTools {
  /** The agent's name in the interaction (`agent.name`, as in approvals' `agentName`); a sub-agent's own name. */
  agentName: string;
  /** The agent resource's name. */
  agent: string;
  tools: InteractionTool[];
  /** The agents it may hand a task to (`functions = [{ agent = @ref(...) }]`), after its tools. */
  subAgents: SubAgentTool[];
}

/** The model-facing definition of handing a task to `agent`: its summary, one `task` string. */
export function subAgentDefinition(agent: Agent): ToolDefinition {
  return {
    name: agent.name,
    description: agent.summary ?? agent.name,
    parameters: {
      type: 'object',
      properties: {
        task: { type: 'string', description: `The task for ${agent.name}, with everything it needs to know` },
      },
      required: ['task'],
      additionalProperties: false,
    },
  };
}

/** The resources an interaction's tools are looked up in (such as a {@link CompiledRepo}). */
export interface ToolSources {
  tools: readonly Tool[];
  connectors: readonly Connector[];
  agents: readonly Agent[];
}

/**
 * The fields of `tool` that the interaction's run inputs fill for `agent`: for the interaction's own agent the
 * bindings that name it or no agent; for an agent it hands tasks to (`sub`), only those that name that agent.
 */
export function runBoundFields(interaction: Interaction, tool: string, agent: string, sub = false): RunBound {
  const bound: RunBound = { request: [], query: [], path: [] };
  for (const b of interaction.inputs.functions.binding) {
    if (b.function === tool && (b.agent === agent || (!sub && b.agent === undefined))) bound[b.type].push(b.target);
  }
  return bound;
}

/**
 * Each agent of an interaction with its tools (its own functions, then `functions.openApi`, each once) and
 * their definitions, the fields the interaction's run inputs fill removed. Tools that are missing are skipped.
 */
export function interactionTools(
  interaction: Interaction,
  sources: ToolSources,
  /** An agent the interaction's agent hands tasks to (a child run's): its own functions only, no openApi ones. */
  subAgent?: string,
): InteractionAgentTools[] {
  const agentName = subAgent ?? interaction.agent.agent;
  const agent = sources.agents.find((a) => a.name === agentName);
  const own = agent?.functions.flatMap((f) => ('ref' in f ? [f.ref] : [])) ?? [];
  const names = subAgent !== undefined ? own : [...own, ...interaction.functions.openApi.map((f) => f.ref)];
  const tools: InteractionTool[] = [];
  for (const name of new Set(names)) {
    const tool = sources.tools.find((t) => t.name === name);
    const connector = tool && sources.connectors.find((c) => c.name === tool.connector);
    if (!tool || !connector) continue;
    const bound = runBoundFields(interaction, name, agentName, subAgent !== undefined);
    tools.push({ tool, connector, definition: toolDefinition(tool, connector, bound) });
  }
  const subAgents: SubAgentTool[] = [];
  for (const f of agent?.functions ?? []) {
    const target = 'agent' in f ? sources.agents.find((a) => a.name === f.agent) : undefined;
    if (target !== undefined) subAgents.push({ agent: target.name, definition: subAgentDefinition(target) });
  }
  return [{ agentName: subAgent ?? interaction.agent.name, agent: agentName, tools, subAgents }];
}
