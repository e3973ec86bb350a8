import type * as Ai from 'ai';
import type { LanguageModel, ToolSet } from 'ai';
import type { JSONSchema7, LanguageModelV4, LanguageModelV4Content } from '@ai-sdk/provider';
import { loadAi } from '../models/ai.js';
import { costOf } from '../models/prices.js';
import { classifyModelError } from '../models/classify.js';
import type { RunContext } from './context.js';
import type { ModelResponse } from '../journal/events.js';
import { historyMaxCharsFromEnv } from '../engine/settings.js';
import { tracedRun } from '../telemetry/index.js';
import { fitConversation, type Trimmed, type Turn } from './history.js';
import { resultOutput, resultSchema } from './result-shape.js';

// Built once per pinned set (itself cached per run shape): the definitions are immutable.
const toolSets = new WeakMap<object, ToolSet>();

/** The interaction's tools as the AI SDK takes them: model-facing definitions unchanged, no `execute`. */
export function sdkTools(ctx: RunContext, { jsonSchema, tool }: Pick<typeof Ai, 'jsonSchema' | 'tool'>): ToolSet {
  const cached = toolSets.get(ctx.pinned);
  if (cached !== undefined) return cached;
  const tools: ToolSet = {};
  for (const t of ctx.pinned.agentTools.tools) {
    tools[t.definition.name] = tool({
      description: t.definition.description,
      inputSchema: jsonSchema(t.definition.parameters as JSONSchema7),
    });
  }
  // The agents it may hand a task to: one `task` string each, described by the agent's summary.
  for (const s of ctx.pinned.agentTools.subAgents) {
    tools[s.definition.name] ??= tool({
      description: s.definition.description,
      inputSchema: jsonSchema(s.definition.parameters as JSONSchema7),
    });
  }
  toolSets.set(ctx.pinned, tools);
  return tools;
}

/**
 * The content with every tool call id unique within the response: a model that names two calls of one turn alike
 * (`call_0` twice) would otherwise have them merged by the AI SDK, which finds a call's input by its id. A repeat
 * becomes `<id>~<n>` (n = 2, 3, ...); the engine tells calls apart by their index anyway.
 */
export function uniqueCallIds(content: LanguageModelV4Content[]): LanguageModelV4Content[] {
  const seen = new Map<string, number>();
  return content.map((part) => {
    if (part.type !== 'tool-call') return part;
    const count = (seen.get(part.toolCallId) ?? 0) + 1;
    seen.set(part.toolCallId, count);
    return count === 1 ? part : { ...part, toolCallId: `${part.toolCallId}~${count}` };
  });
}

const wrapped = new WeakMap<object, LanguageModel>();

function withUniqueIds(
  model: LanguageModel,
  { wrapLanguageModel }: Pick<typeof Ai, 'wrapLanguageModel'>,
): LanguageModel {
  if (typeof model === 'string') return model;
  let found = wrapped.get(model);
  if (found === undefined) {
    found = wrapLanguageModel({
      model: model as LanguageModelV4,
      middleware: {
        specificationVersion: 'v4',
        wrapGenerate: async ({ doGenerate }) => {
          const result = await doGenerate();
          return { ...result, content: uniqueCallIds(result.content) };
        },
      },
    });
    wrapped.set(model, found);
  }
  return found;
}

// The structured output's text; the SDK sets none when the turn ended on tool calls or an empty answer.
function readOutput(result: { text: string; output: unknown }): string {
  try {
    return typeof result.output === 'string' ? result.output : result.text;
  } catch {
    return result.text;
  }
}

const historyMaxChars = historyMaxCharsFromEnv();

/**
 * Asks the model for its next turn; throws the run's failure (`api:models:*`) when it cannot answer. `trimmed`: what
 * of a long history was left out to fit (docs/runs.md "Long conversations"), stored as `history-trimmed`.
 */
export async function modelTurn(
  ctx: RunContext,
  task: string,
  turns: Turn[],
): Promise<ModelResponse & { trimmed?: Trimmed }> {
  const spec = ctx.pinned.agent.resource.model;
  const started = performance.now();
  const span = ctx.telemetry?.chat(tracedRun(ctx));
  try {
    const [{ model, scripted }, ai] = await Promise.all([ctx.models(spec), loadAi()]);
    const schema = resultSchema(ctx);
    const { messages, trimmed } = fitConversation(task, turns, historyMaxChars);
    const result = await ctx.outside(
      ai.generateText({
        model: withUniqueIds(model, ai),
        instructions: ctx.pinned.agent.resource.instructions,
        messages,
        tools: sdkTools(ctx, ai),
        maxRetries: ctx.modelRetries,
        abortSignal: ctx.modelSignal,
        ...(schema === undefined ? {} : { output: resultOutput(schema) }),
      }),
    );
    const usage = { inputTokens: result.usage.inputTokens ?? null, outputTokens: result.usage.outputTokens ?? null };
    const costUsd = costOf(ctx.prices, spec, usage);
    span?.end({ responseId: result.response.id, finishReason: result.finishReason, ...usage, costUsd });
    // With a result schema, a final answer is the structured output's text (a provider may return it apart).
    const text = schema !== undefined && result.toolCalls.length === 0 ? readOutput(result) : result.text;
    return {
      text,
      toolCalls: result.toolCalls.map((call) => ({ id: call.toolCallId, name: call.toolName, arguments: call.input })),
      usage,
      costUsd,
      durationMs: Math.round(performance.now() - started),
      model: spec,
      scripted,
      ...(trimmed === undefined ? {} : { trimmed }),
    };
  } catch (error) {
    if (ctx.modelSignal.aborted) {
      span?.fail('cancelled');
      throw ctx.modelSignal.reason ?? error;
    }
    const failure = classifyModelError(spec, error);
    span?.fail(failure.code);
    throw failure;
  }
}
