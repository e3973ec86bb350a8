import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4Content } from '@ai-sdk/provider';
import { engineErrors } from '../errors.js';

/**
 * One turn of a script: a text answer, tool calls, or a structured answer (`object`, answered as its JSON text, as a
 * provider's structured output is; for an interaction with `result.schema`).
 */
export type ScriptTurn = (
  | { text: string }
  | { object: unknown }
  | { toolCalls: { name: string; arguments?: unknown; id?: string }[] }
) & {
  /** The turn played instead when a tool call of the turn before failed (a person's rejection is no failure). */
  onToolError?: ScriptTurn;
};

/** The text a scripted text turn is replaced with when a call of the turn before failed and it has no `onToolError`. */
export function scriptToolFailedText(name: string, failures: string[]): string {
  return `[scripted stand-in ${name}: ${failures.join('; ')}; the script has no "onToolError" turn for it]`;
}

/**
 * The calls of the turn before that failed, as `the call of NAME failed: CODE: ERROR`: the error results of the
 * conversation's last message when it is the tool results, a person's rejection (`api:approvals:rejected`) left out.
 */
function failedCalls(options: LanguageModelV4CallOptions): string[] {
  const last = options.prompt[options.prompt.length - 1];
  if (last?.role !== 'tool') return [];
  const failures: string[] = [];
  for (const part of last.content) {
    if (part.type !== 'tool-result' || (part.output.type !== 'error-text' && part.output.type !== 'error-json'))
      continue;
    let error: { code?: unknown; error?: unknown } = {};
    try {
      const value = part.output.value;
      error = (typeof value === 'string' ? JSON.parse(value) : value) ?? {};
    } catch {
      error = { error: String(part.output.value) };
    }
    if (error.code === 'api:approvals:rejected') continue;
    const code = typeof error.code === 'string' ? `${error.code}: ` : '';
    failures.push(`the call of ${part.toolName} failed: ${code}${String(error.error ?? 'the call failed')}`);
  }
  return failures;
}

/** The text the scripted model answers once its script has no more turns. */
export function scriptEndedText(name: string): string {
  return `[scripted stand-in ${name}: the script has no more turns]`;
}

async function readScript(name: string, dir: string): Promise<ScriptTurn[]> {
  const file = join(dir, `${name}.json`);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw engineErrors.create('api:models:invalid-response', {
      model: `scripted:${name}`,
      detail: `no script file ${file}`,
    });
  }
  const fail = (detail: string) =>
    engineErrors.create('api:models:invalid-response', { model: `scripted:${name}`, detail: `${file}: ${detail}` });
  let turns: unknown;
  try {
    turns = JSON.parse(text);
  } catch (error) {
    throw fail(`not valid JSON (${(error as Error).message})`);
  }
  if (!Array.isArray(turns)) throw fail('not a JSON array of turns');
  // A mistyped turn fails the run here, naming the file and the turn, rather than playing as "no more turns".
  const check = (turn: unknown, at: string, nested: boolean) => {
    const shape =
      'a turn is {"text": "..."}, {"object": {...}} or {"toolCalls": [{"name": "...", "arguments": {...}}]}, with an optional "onToolError" turn';
    if (typeof turn !== 'object' || turn === null || Array.isArray(turn))
      throw fail(`${at} is not an object; ${shape}`);
    if ('onToolError' in turn) {
      if (nested) throw fail(`${at} has an "onToolError" inside an "onToolError"`);
      check(turn.onToolError, `${at}'s "onToolError"`, true);
    }
    const keys = Object.keys(turn).filter((key) => key !== 'onToolError');
    const unknown = keys.filter((key) => key !== 'text' && key !== 'object' && key !== 'toolCalls');
    if (unknown.length > 0) throw fail(`${at} has an unknown key "${unknown[0]}"; ${shape}`);
    if (keys.length !== 1) throw fail(`${at} needs exactly one of "text", "object" and "toolCalls"; ${shape}`);
    if ('text' in turn && typeof turn.text !== 'string') throw fail(`${at}: "text" is not a string`);
    if ('toolCalls' in turn) {
      const calls = turn.toolCalls;
      if (!Array.isArray(calls) || calls.length === 0) throw fail(`${at}: "toolCalls" is not a non-empty array`);
      calls.forEach((call: unknown, c) => {
        if (typeof call !== 'object' || call === null || typeof (call as { name?: unknown }).name !== 'string') {
          throw fail(`${at}, tool call ${c + 1} has no "name"`);
        }
        const extra = Object.keys(call).filter((key) => !['name', 'arguments', 'id'].includes(key));
        if (extra.length > 0)
          throw fail(`${at}, tool call ${c + 1} has an unknown key "${extra[0]}" (name, arguments, id)`);
      });
    }
  };
  turns.forEach((turn: unknown, index) => {
    check(turn, `turn ${index + 1}`, false);
  });
  return turns as ScriptTurn[];
}

/**
 * A model that plays a script (`<dir>/<name>.json`): the turn played is the number of assistant turns
 * already in the conversation, so a run replayed after a crash gets the same answers.
 */
export function scriptedModel(name: string, dir: string): LanguageModelV4 {
  const generate = async (options: LanguageModelV4CallOptions) => {
    const turn = options.prompt.filter((message) => message.role === 'assistant').length;
    const script = await readScript(name, dir);
    // After a failed call the script's own words could claim a success (issue #45): its `onToolError` turn is played
    // instead, else a text turn is replaced by words that report the failure (a tool call or object turn plays as
    // written: it may be the script's way on, and an object must keep its shape).
    const failures = failedCalls(options);
    let step = script[turn];
    if (failures.length > 0 && step !== undefined) {
      if (step.onToolError !== undefined) step = step.onToolError;
      else if ('text' in step) step = { text: scriptToolFailedText(name, failures) };
    }
    const content: LanguageModelV4Content[] = [];
    if (step !== undefined && 'toolCalls' in step && Array.isArray(step.toolCalls)) {
      step.toolCalls.forEach((call, index) => {
        content.push({
          type: 'tool-call',
          // A script may fix the id, as some models do (`call_0` in every turn): the engine must not rely on ids.
          toolCallId: call.id ?? `scripted-${turn + 1}-${index + 1}`,
          toolName: call.name,
          input: JSON.stringify(call.arguments ?? {}),
        });
      });
    } else if (step !== undefined && 'object' in step) {
      content.push({ type: 'text', text: JSON.stringify(step.object) });
    } else {
      const text = step !== undefined && 'text' in step ? String(step.text) : scriptEndedText(name);
      content.push({ type: 'text', text });
    }
    const calls = content.some((part) => part.type === 'tool-call');
    return {
      content,
      finishReason: { unified: calls ? ('tool-calls' as const) : ('stop' as const), raw: undefined },
      usage: {
        inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 0, text: 0, reasoning: 0 },
      },
      warnings: [],
    };
  };
  return {
    specificationVersion: 'v4',
    provider: 'scripted',
    modelId: name,
    supportedUrls: {},
    doGenerate: generate,
    async doStream() {
      throw new Error('the scripted model answers generateText only');
    },
  };
}
