import { generateText, jsonSchema, type ToolSet, tool } from 'ai';
import type { JSONSchema7 } from '@ai-sdk/provider';
import { classifyModelError } from '../models/classify.js';
import type { RunContext } from './context.js';
import { conversation, type Turn, type TurnCall } from './history.js';

/** What one model turn stored: the `model-response` event's data. */
export interface ModelResponse {
  text: string;
  toolCalls: Omit<TurnCall, 'index'>[];
  usage: { inputTokens: number | null; outputTokens: number | null };
  durationMs: number;
  model: string;
  scripted: boolean;
}

// Built once per pinned set (itself cached per run shape): the definitions are immutable.
const toolSets = new WeakMap<object, ToolSet>();

/** The interaction's tools as the AI SDK takes them: model-facing definitions unchanged, no `execute`. */
export function sdkTools(ctx: RunContext): ToolSet {
  const cached = toolSets.get(ctx.pinned);
  if (cached !== undefined) return cached;
  const tools: ToolSet = {};
  for (const t of ctx.pinned.agentTools.tools) {
    tools[t.definition.name] = tool({
      description: t.definition.description,
      inputSchema: jsonSchema(t.definition.parameters as JSONSchema7),
    });
  }
  toolSets.set(ctx.pinned, tools);
  return tools;
}

/** Asks the model for its next turn; throws the run's failure (`api:models:*`) when it cannot answer. */
export async function modelTurn(ctx: RunContext, task: string, turns: Turn[]): Promise<ModelResponse> {
  const spec = ctx.pinned.agent.resource.model;
  const started = performance.now();
  try {
    const { model, scripted } = ctx.models(spec);
    const result = await ctx.outside(
      generateText({
        model,
        instructions: ctx.pinned.agent.resource.instructions,
        messages: conversation(task, turns),
        tools: sdkTools(ctx),
        maxRetries: ctx.modelRetries,
        abortSignal: ctx.signal,
      }),
    );
    return {
      text: result.text,
      toolCalls: result.toolCalls.map((call) => ({ id: call.toolCallId, name: call.toolName, arguments: call.input })),
      usage: { inputTokens: result.usage.inputTokens ?? null, outputTokens: result.usage.outputTokens ?? null },
      durationMs: Math.round(performance.now() - started),
      model: spec,
      scripted,
    };
  } catch (error) {
    if (ctx.signal.aborted) throw ctx.signal.reason ?? error;
    throw classifyModelError(spec, error);
  }
}
