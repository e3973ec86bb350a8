import type { ModelMessage } from 'ai';
import type { JournalEvent } from '../journal/events.js';
import { retryMessage } from './result-shape.js';

/** One tool call of a model turn; its identity is (run, turn, `index`), never the model's `id` alone. */
export interface TurnCall {
  /** The model's id: sent back to the model with the result, never used to tell calls apart (models reuse ids). */
  id: string;
  /** The call's position in its turn (0-based). */
  index: number;
  name: string;
  arguments: unknown;
}

/** A stored tool result. */
export interface StoredResult {
  ok: boolean;
  result: string;
}

/** One model turn rebuilt from the events: the model's message, and what became of each call. */
export interface Turn {
  step: number;
  text: string;
  calls: TurnCall[];
  /** The indexes of the calls with a stored `tool-call-started`. */
  started: Set<number>;
  /** The stored results by call index. */
  results: Map<number, StoredResult>;
  /** What the model was told after this turn's answer did not match the result schema (`result-invalid`). */
  feedback?: string;
}

// The index an event names; an event stored before indexes were (before schema 9) names the model's id only.
function indexOf(turn: Turn, data: { toolCallId: string; index?: number }): number {
  if (typeof data.index === 'number') return data.index;
  return turn.calls.findIndex((call) => call.id === data.toolCallId);
}

/** The run's model turns, rebuilt from its stored events. */
export function readTurns(events: JournalEvent[]): Turn[] {
  const turns: Turn[] = [];
  for (const event of events) {
    const turn = turns[turns.length - 1];
    if (event.type === 'model-response') {
      turns.push({
        step: turns.length + 1,
        text: event.data.text ?? '',
        calls: (event.data.toolCalls ?? []).map((call, index) => ({ ...call, index })),
        started: new Set(),
        results: new Map(),
      });
    } else if (event.type === 'tool-call-started' && turn) {
      turn.started.add(indexOf(turn, event.data));
    } else if (event.type === 'tool-result' && turn) {
      turn.results.set(indexOf(turn, event.data), { ok: event.data.ok === true, result: event.data.result ?? '' });
    } else if (event.type === 'result-invalid' && turn) {
      turn.feedback = retryMessage(event.data.errors ?? []);
    }
  }
  return turns;
}

/** The conversation the model is sent: the task, then each turn and its results in call order. */
export function conversation(task: string, turns: Turn[]): ModelMessage[] {
  const messages: ModelMessage[] = [{ role: 'user', content: task }];
  for (const turn of turns) {
    const content: Exclude<Extract<ModelMessage, { role: 'assistant' }>['content'], string> = [];
    if (turn.text !== '') content.push({ type: 'text', text: turn.text });
    for (const call of turn.calls) {
      content.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.arguments ?? {} });
    }
    messages.push({ role: 'assistant', content: content.length > 0 ? content : [{ type: 'text', text: '' }] });
    if (turn.calls.length > 0) {
      messages.push({
        role: 'tool',
        content: turn.calls.map((call) => {
          const stored = turn.results.get(call.index);
          const value = stored?.result ?? 'No result was stored for this call.';
          return {
            type: 'tool-result' as const,
            toolCallId: call.id,
            toolName: call.name,
            output: stored?.ok ? { type: 'text' as const, value } : { type: 'error-text' as const, value },
          };
        }),
      });
    }
    if (turn.feedback !== undefined) messages.push({ role: 'user', content: turn.feedback });
  }
  return messages;
}
