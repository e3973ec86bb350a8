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
  /** The messages of a conversation sent after this turn's reply (`user-message`), in order. */
  replies: string[];
  /** The arguments a person set by editing before approving, by call index (decision 0215). */
  edits?: Map<number, unknown>;
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
        replies: [],
      });
    } else if (event.type === 'tool-call-started' && turn) {
      turn.started.add(indexOf(turn, event.data));
    } else if ((event.type === 'authorization-requested' || event.type === 'limit-waiting') && turn) {
      // The call waited for its end user to connect before anything was sent: once they have, it is made as a new
      // call (an MCP call too, which is never sent twice), not as one whose outcome was lost. So is one that waited
      // for its limit's window (nothing was sent).
      turn.started.delete(indexOf(turn, event.data));
    } else if (event.type === 'tool-result' && turn) {
      turn.results.set(indexOf(turn, event.data), { ok: event.data.ok === true, result: event.data.result ?? '' });
    } else if (event.type === 'approval-answered' && turn && event.data.arguments !== undefined) {
      const { toolCallId, index: at } = event.data;
      const index = indexOf(turn, at === null ? { toolCallId: toolCallId ?? '' } : { toolCallId: '', index: at });
      if (index >= 0) {
        turn.edits ??= new Map();
        turn.edits.set(index, event.data.arguments);
      }
    } else if (event.type === 'result-invalid' && turn) {
      turn.feedback = retryMessage(event.data.errors ?? []);
    } else if (event.type === 'user-message' && turn) {
      turn.replies.push(event.data.text ?? '');
    }
  }
  return turns;
}

/** How many model turns were taken since the last message of a conversation (all of them for a one-shot run). */
export function turnsSinceInput(turns: Turn[]): number {
  let n = 0;
  for (let i = turns.length - 1; i >= 0 && turns[i]!.replies.length === 0; i--) n++;
  return n;
}

/** How much of a conversation's history was left out of what the model is sent. */
export interface Trimmed {
  /** Turns (with the messages after them) left out, the oldest first. */
  turnsLeftOut: number;
  /** Tool results cut short. */
  toolResultsCut: number;
}

/** How many characters of a tool result are kept when it is cut to fit (docs/runs.md "Long conversations"). */
export const CUT_RESULT_CHARS = 500;

const size = (messages: ModelMessage[]) => JSON.stringify(messages).length;

/**
 * The conversation the model is sent, fitted to `maxChars` characters of JSON (docs/runs.md "Long conversations"):
 * all of it when it fits; else the tool results of every turn but the last are cut to their first
 * {@link CUT_RESULT_CHARS} characters, oldest first, until it fits; else the oldest turns are left out, a whole
 * exchange (up to a person's message) at a time, keeping the task and the newest turns, and the task says how many
 * turns are missing. `trimmed` says what was done (undefined when nothing).
 */
export function fitConversation(
  task: string,
  turns: Turn[],
  maxChars: number,
): { messages: ModelMessage[]; trimmed?: Trimmed } {
  let messages = conversation(task, turns);
  if (size(messages) <= maxChars) return { messages };
  const cut = turns.map((turn) => ({ ...turn, results: new Map(turn.results) }));
  let toolResultsCut = 0;
  for (const turn of cut.slice(0, -1)) {
    for (const [index, stored] of turn.results) {
      if (stored.result.length <= CUT_RESULT_CHARS) continue;
      const left = stored.result.length - CUT_RESULT_CHARS;
      turn.results.set(index, {
        ok: stored.ok,
        result: `${stored.result.slice(0, CUT_RESULT_CHARS)}… [${left} characters cut to fit the model's context]`,
      });
      toolResultsCut++;
    }
    messages = conversation(task, cut);
    if (size(messages) <= maxChars) return { messages, trimmed: { turnsLeftOut: 0, toolResultsCut } };
  }
  // Leave out whole exchanges: only after a turn a person answered, so the kept part starts with their message.
  let turnsLeftOut = 0;
  for (let i = 0; i < cut.length - 1; i++) {
    if (cut[i]!.replies.length === 0) continue;
    turnsLeftOut = i + 1;
    const note = `${task}\n\n[The ${turnsLeftOut} oldest turns of this conversation are left out to fit the model's context.]`;
    // The person's messages after the last turn left out stay: the kept turns answer them.
    messages = conversation(note, cut.slice(turnsLeftOut));
    messages.splice(1, 0, ...cut[i]!.replies.map((reply): ModelMessage => ({ role: 'user', content: reply })));
    if (size(messages) <= maxChars) break;
  }
  return { messages, trimmed: { turnsLeftOut, toolResultsCut } };
}

/** What the model is told of a call a person edited before approving it (decision 0215). */
export function editNote(args: unknown): string {
  return `A person changed the arguments of this call before approving it; the call was made with these arguments instead: ${JSON.stringify(args)}`;
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
          const result = stored?.result ?? 'No result was stored for this call.';
          // The model is told that a person changed its arguments and what they became; the result is the upstream's.
          const value = turn.edits?.has(call.index) ? `${editNote(turn.edits.get(call.index))}\n\n${result}` : result;
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
    for (const reply of turn.replies) messages.push({ role: 'user', content: reply });
  }
  return messages;
}
