import { describe, expect, it } from 'vitest';
import { CUT_RESULT_CHARS, conversation, fitConversation, type Turn, turnsSinceInput } from './history.js';

// The trimming rule of a long conversation (docs/runs.md "Long conversations"): tool results of older turns first,
// then the oldest exchanges, keeping the task and the newest turns; what was done is reported, never silent.
function turn(step: number, text: string, opts: { result?: string; replies?: string[] } = {}): Turn {
  const calls = opts.result === undefined ? [] : [{ id: `c${step}`, index: 0, name: 'get-order', arguments: {} }];
  const results = new Map(opts.result === undefined ? [] : [[0, { ok: true, result: opts.result }]]);
  return { step, text, calls, started: new Set(), results, replies: opts.replies ?? [] };
}

const json = (value: unknown) => JSON.stringify(value).length;
const big = 'x'.repeat(5000);

describe('fitConversation', () => {
  const turns = [
    turn(1, '', { result: big }),
    turn(2, 'reply one', { replies: ['message two'] }),
    turn(3, '', { result: big }),
    turn(4, 'reply two', { replies: ['message three'] }),
    turn(5, '', { result: 'small' }),
  ];

  it('sends the whole history while it fits, and says nothing was trimmed', () => {
    const fitted = fitConversation('the task', turns, 1_000_000);
    expect(fitted.trimmed).toBeUndefined();
    expect(fitted.messages).toEqual(conversation('the task', turns));
  });

  it('cuts the tool results of older turns first, oldest first, and keeps every message', () => {
    const whole = json(conversation('the task', turns));
    const fitted = fitConversation('the task', turns, whole - 4000);
    expect(fitted.trimmed).toEqual({ turnsLeftOut: 0, toolResultsCut: 1 });
    const text = JSON.stringify(fitted.messages);
    expect(text).toContain(`${'x'.repeat(CUT_RESULT_CHARS)}… [${5000 - CUT_RESULT_CHARS} characters cut`);
    expect(text).toContain('message two');
    expect(json(fitted.messages)).toBeLessThanOrEqual(whole - 4000);
  });

  it('then leaves the oldest exchanges out, keeping the task (which says so) and the newest turns', () => {
    const fitted = fitConversation('the task', turns, 1200);
    expect(fitted.trimmed).toEqual({ turnsLeftOut: 4, toolResultsCut: 2 });
    const first = fitted.messages[0];
    expect(first).toEqual({
      role: 'user',
      content: "the task\n\n[The 4 oldest turns of this conversation are left out to fit the model's context.]",
    });
    const text = JSON.stringify(fitted.messages);
    expect(text).not.toContain('message two');
    expect(text).toContain('message three');
    expect(text).toContain('small');
  });

  it('counts the model turns since the last message', () => {
    expect(turnsSinceInput(turns)).toBe(1);
    expect(turnsSinceInput(turns.slice(0, 1))).toBe(1);
    expect(turnsSinceInput([])).toBe(0);
  });
});
