import type { ModelMessage } from 'ai';
import type { RunEventRecord } from '@maitento/store';

/** One tool call of a model turn. */
export interface TurnCall {
  id: string;
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
  started: Set<string>;
  results: Map<string, StoredResult>;
}

/** The run's model turns, rebuilt from its stored events. */
export function readTurns(events: RunEventRecord[]): Turn[] {
  const turns: Turn[] = [];
  for (const event of events) {
    const data = event.data;
    const turn = turns[turns.length - 1];
    if (event.type === 'model-response') {
      turns.push({
        step: turns.length + 1,
        text: String(data.text ?? ''),
        calls: (data.toolCalls as TurnCall[] | undefined) ?? [],
        started: new Set(),
        results: new Map(),
      });
    } else if (event.type === 'tool-call-started' && turn) {
      turn.started.add(String(data.toolCallId));
    } else if (event.type === 'tool-result' && turn) {
      turn.results.set(String(data.toolCallId), { ok: data.ok === true, result: String(data.result ?? '') });
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
          const stored = turn.results.get(call.id);
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
  }
  return messages;
}
