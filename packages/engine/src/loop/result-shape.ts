// Answers in a declared shape: an interaction with `result.schema` asks the model for a JSON object (the provider's
// structured output, where the AI SDK offers one) and checks each final answer against the schema with ajv. A wrong
// answer is stored with its errors and sent back to the model once; a second wrong answer fails the run.
import type { JsonSchema } from '@maitento/lang';
import { describeErrors, validatorFor } from '@maitento/gateway';
import type { OutputInterface } from 'ai';
import { engineErrors } from '../errors.js';
import {
  inputRequested,
  type ModelResponse,
  type RunEventInput,
  resultInvalid,
  runCompleted,
  runFailed,
} from '../journal/events.js';
import type { RunContext } from './context.js';
import type { Turn } from './history.js';

/** How many wrong answers a run may give before it fails: the first is retried with its errors. */
export const RESULT_ATTEMPTS = 2;

/** The interaction's result schema, if it declares one. */
export function resultSchema(ctx: RunContext): JsonSchema | undefined {
  // A child run (an agent handed a task) answers its parent's call in text: the schema is the interaction's answer's.
  if (ctx.run.parentRunId !== null) return undefined;
  return ctx.pinned.interaction.resource.result?.schema;
}

const outputs = new WeakMap<object, OutputInterface<string, undefined, never>>();

/**
 * The AI SDK output of a result schema: the request asks for JSON of that schema (OpenAI `response_format`
 * json_schema, Anthropic structured output or its JSON tool), and the answer is handed over as text, unparsed:
 * the engine validates it itself, so that a wrong answer is stored and retried rather than thrown.
 */
export function resultOutput(schema: JsonSchema): OutputInterface<string, undefined, never> {
  const key = schema as object;
  let output = outputs.get(key);
  if (output === undefined) {
    output = {
      name: 'object',
      responseFormat: Promise.resolve({ type: 'json', schema: schema as never, name: 'result' }),
      parseCompleteOutput: async ({ text }: { text: string }) => text,
      parsePartialOutput: async () => undefined,
      createElementStreamTransform: () => undefined,
    };
    outputs.set(key, output);
  }
  return output;
}

/** What is wrong with `text` as a result of `schema`: lines a model can act on; empty when it is right. */
export function resultErrors(schema: JsonSchema, text: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return [
      `the answer is not JSON (${error instanceof Error ? error.message : String(error)}); answer with JSON only`,
    ];
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return ['the answer must be a JSON object'];
  }
  const validate = validatorFor(schema);
  if (validate(value)) return [];
  return describeErrors(validate.errors, 'result');
}

/** The message the model is sent after a wrong answer. */
export function retryMessage(errors: string[]): string {
  return (
    'Your answer does not match the required JSON Schema:\n' +
    errors.map((line) => `- ${line}`).join('\n') +
    '\nAnswer again with only a JSON object that matches the schema.'
  );
}

/**
 * The events that end a final answer (no tool calls) of turn `step`: completed (with the object's JSON text when
 * the interaction declares a result schema and the answer matches it), or `result-invalid` and, on the last
 * attempt, failed. `retry` is true when the model is asked again.
 */
export function finalAnswer(
  ctx: RunContext,
  step: number,
  response: ModelResponse,
  turns: Turn[],
): { events: RunEventInput[]; retry: boolean } {
  const schema = resultSchema(ctx);
  // A child run ends with its answer, which is its parent's tool result, even in a conversation's interaction.
  const conversation = ctx.run.parentRunId === null ? ctx.pinned.interaction.resource.conversation : undefined;
  // A conversation's reply is not its end: the run waits for the next message (docs/runs.md "Conversations").
  const accept = (structured: boolean) =>
    conversation === undefined
      ? runCompleted(response.text, response.scripted, structured)
      : inputRequested(step, new Date(Date.now() + conversation.maxIdleSeconds * 1000), response.text, structured);
  if (schema === undefined) return { events: [accept(false)], retry: false };
  const errors = resultErrors(schema, response.text);
  if (errors.length === 0) return { events: [accept(true)], retry: false };
  const invalid = resultInvalid(step, errors);
  // The wrong answers in a row just before this one (a conversation's earlier replies do not count).
  let wrongBefore = 0;
  for (let i = turns.length - 1; i >= 0 && turns[i]!.feedback !== undefined && turns[i]!.replies.length === 0; i--) {
    wrongBefore++;
  }
  if (wrongBefore + 1 < RESULT_ATTEMPTS) return { events: [invalid], retry: true };
  const error = engineErrors.create('api:runs:result-invalid', { detail: errors.join('; ') });
  return { events: [invalid, runFailed(error)], retry: false };
}
