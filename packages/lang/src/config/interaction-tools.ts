import type { Agent, Connector, Interaction, Tool, ToolDefinition } from './resources.js';
import { type RunBound, toolDefinition } from './tool-definition.js';

/** One tool as an agent of an interaction sees it. */
export interface InteractionTool {
  tool: Tool;
  connector: Connector;
  definition: ToolDefinition;
}

/** The tools one agent of an interaction is given, with their model-facing definitions for that interaction. */
export interface InteractionAgentTools {
  /** The agent's name in the interaction (`agent.name`, as in approvals' `agentName`). */
  agentName: string;
  /** The agent resource's name. */
  agent: string;
  tools: InteractionTool[];
}

/** The resources an interaction's tools are looked up in (such as a {@link CompiledRepo}). */
export interface ToolSources {
  tools: readonly Tool[];
  connectors: readonly Connector[];
  agents: readonly Agent[];
}

/** The fields of `tool` that the interaction's run inputs fill for `agent`. */
export function runBoundFields(interaction: Interaction, tool: string, agent: string): RunBound {
  const bound: RunBound = { request: [], query: [], path: [] };
  for (const b of interaction.inputs.functions.binding) {
    if (b.function === tool && (b.agent === undefined || b.agent === agent)) bound[b.type].push(b.target);
  }
  return bound;
}

/**
 * Each agent of an interaction with its tools (its own functions, then `functions.openApi`, each once) and
 * their definitions, the fields the interaction's run inputs fill removed. Tools that are missing are skipped.
 */
export function interactionTools(interaction: Interaction, sources: ToolSources): InteractionAgentTools[] {
  const agentName = interaction.agent.agent;
  const agent = sources.agents.find((a) => a.name === agentName);
  const names = [...(agent?.functions.map((f) => f.ref) ?? []), ...interaction.functions.openApi.map((f) => f.ref)];
  const tools: InteractionTool[] = [];
  for (const name of new Set(names)) {
    const tool = sources.tools.find((t) => t.name === name);
    const connector = tool && sources.connectors.find((c) => c.name === tool.connector);
    if (!tool || !connector) continue;
    const definition = toolDefinition(tool, connector, runBoundFields(interaction, name, agentName));
    tools.push({ tool, connector, definition });
  }
  return [{ agentName: interaction.agent.name, agent: agentName, tools }];
}
