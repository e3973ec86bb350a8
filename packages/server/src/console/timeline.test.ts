import type { RunEvent } from '@maitento/engine';
import { h } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { describe, expect, it } from 'vitest';
import { highlightJson } from './json-view.js';
import { consoleCss } from './styles.js';
import { barClasses, buildTimeline, duration, errorDocUrl, Timeline, usd } from './timeline.js';

const T0 = Date.parse('2026-12-06T10:00:00.000Z');
let seq = 0;
const ev = (type: string, offsetMs: number, data: Record<string, unknown>): RunEvent =>
  ({ seq: ++seq, type, at: new Date(T0 + offsetMs).toISOString(), data }) as unknown as RunEvent;

function refundRun(): RunEvent[] {
  seq = 0;
  return [
    ev('run-started', 0, { inputs: { message: 'refund A-1' } }),
    ev('model-response', 800, {
      step: 1,
      text: 'I will refund it.',
      toolCalls: [{ id: 'c1', name: 'refund-order', arguments: { orderId: 'A-1' } }],
      usage: { inputTokens: 120, outputTokens: 30 },
      durationMs: 800,
      model: 'openai:gpt-4o-mini',
    }),
    ev('tool-call-started', 810, { toolCallId: 'c1', index: 0, name: 'refund-order', arguments: { orderId: 'A-1' } }),
    ev('approval-requested', 820, {
      toolCallId: 'c1',
      index: 0,
      approval: { id: 'ap-1', functionName: 'refund-order' },
      request: { method: 'POST', url: 'https://orders.example/A-1/refund', headers: { authorization: '[secret]' } },
    }),
    ev('approval-answered', 5820, { approvalId: 'ap-1', decision: 'approve', by: { keyName: 'lead' }, reason: null }),
    ev('tool-result', 6020, {
      toolCallId: 'c1',
      index: 0,
      name: 'refund-order',
      ok: false,
      status: 422,
      result: '{"error":"too much"}',
      code: 'api:tools:upstream-error',
      durationMs: 200,
    }),
    ev('model-response', 7020, {
      step: 2,
      text: 'Refund refused.',
      toolCalls: [],
      usage: { inputTokens: null, outputTokens: null },
      durationMs: 1000,
    }),
    ev('run-completed', 7030, { result: 'Refund refused.' }),
  ];
}

describe('a run timeline', () => {
  it('has one bar per model turn, tool call and approval wait, with the durations the events state', () => {
    const model = buildTimeline(refundRun(), T0 + 60_000);
    expect(model.spans.map((s) => [s.kind, s.durationMs])).toEqual([
      ['model', 800],
      ['approval', 5000],
      ['fail', 200],
      ['model', 1000],
    ]);
    expect(model.end - model.start).toBe(7030);
    const call = model.spans[2];
    expect(call.error?.code).toBe('api:tools:upstream-error');
    expect(call.detail.map((d) => d.title)).toEqual(['Arguments', 'The prepared request (secrets masked)', 'Response']);
    expect(model.spans[1].facts).toEqual(['approved by lead']);
    expect(model.spans[0].facts[0]).toBe('120 in / 30 out tokens');
  });

  it('keeps a wait open up to now while the run runs', () => {
    const events = refundRun().slice(0, 4);
    const model = buildTimeline(events, T0 + 3000);
    const wait = model.spans.find((s) => s.kind === 'approval');
    expect(wait).toMatchObject({ durationMs: null, end: T0 + 3000, facts: ['waiting'] });
    expect(model.end).toBe(T0 + 3000);
  });

  it('places a bar by whole percents inside the track', () => {
    const window = { start: 0, end: 1000 };
    expect(barClasses({ start: 0, end: 1000 }, window)).toBe('tl-bar o-0 w-100');
    expect(barClasses({ start: 250, end: 260 }, window)).toBe('tl-bar o-25 w-1');
    expect(barClasses({ start: 995, end: 1000 }, window)).toBe('tl-bar o-99 w-1');
    expect(barClasses({ start: 500, end: 500 }, window)).toBe('tl-bar o-50 w-0');
    // Every class a bar can get is in the stylesheet.
    const css = consoleCss();
    for (const n of [0, 1, 50, 99, 100]) expect(css).toContain(`.o-${n}{left:${n}%}.w-${n}{width:${n}%}`);
  });

  it('renders one list item per bar, no style attribute, the error linked to docs/errors.md', () => {
    const model = buildTimeline(refundRun(), T0);
    const html = renderToString(h(Timeline, { runId: 'r1', model, children: new Map(), poll: false }));
    expect(html.match(/class="tl-step /g)).toHaveLength(4);
    expect(html).not.toContain('style=');
    expect(html).not.toContain('hx-get');
    expect(html).toContain(`href="${errorDocUrl('api:tools:upstream-error')}"`);
    expect(errorDocUrl('api:tools:upstream-error')).toMatch(/docs\/errors\.md#apitoolsupstream-error$/);
    expect(html).toContain('200 ms');
    const live = renderToString(h(Timeline, { runId: 'r1', model, children: new Map(), poll: true }));
    expect(live).toContain('hx-get="/console/runs/r1/timeline"');
  });

  it('nests a child run under the call that started it, with ids of its own', () => {
    seq = 0;
    const parent = [
      ev('run-started', 0, {}),
      ev('tool-call-started', 100, {
        toolCallId: 'c1',
        index: 0,
        name: 'billing-agent',
        arguments: {},
        childRunId: 'child-1',
      }),
      ev('tool-result', 2100, {
        toolCallId: 'c1',
        index: 0,
        name: 'billing-agent',
        ok: true,
        status: null,
        result: 'done',
        code: null,
        durationMs: 2000,
      }),
      ev('run-completed', 2200, { result: 'done' }),
    ];
    seq = 0;
    const child = [
      ev('run-started', 150, {}),
      ev('model-response', 1150, { step: 1, text: 'ok', toolCalls: [], usage: {}, durationMs: 1000 }),
      ev('run-completed', 1200, { result: 'ok' }),
    ];
    const model = buildTimeline(parent, T0 + 5000);
    expect(model.spans[0]).toMatchObject({ kind: 'tool', childRunId: 'child-1', durationMs: 2000 });
    const children = new Map([['child-1', buildTimeline(child, T0 + 5000, 'run-child-1-')]]);
    const html = renderToString(h(Timeline, { runId: 'p', model, children, poll: false }));
    expect(html).toMatch(
      /<ol aria-label="Steps of child run child-1"><li class="tl-step k-model" id="run-child-1-span-2">/,
    );
    const ids = [...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('says durations in words', () => {
    expect([duration(850), duration(2400), duration(185_000), duration(3_900_000)]).toEqual([
      '850 ms',
      '2.4 s',
      '3 min 5 s',
      '1 h 5 min',
    ]);
  });
});

describe('tokens, cost and budget waits on the timeline', () => {
  it('says each priced turn’s cost, sums the run’s tokens and cost, and draws a budget wait to its extension', () => {
    seq = 0;
    const turn = (step: number, at: number, costUsd?: number) =>
      ev('model-response', at, {
        step,
        toolCalls: [],
        usage: { inputTokens: 300, outputTokens: 100 },
        durationMs: 100,
        ...(costUsd === undefined ? {} : { costUsd }),
      });
    const events = [
      ev('run-started', 0, {}),
      turn(1, 100, 0.0014),
      turn(2, 200),
      ev('budget-exceeded', 300, {
        spent: { tokens: 800, costUsd: 0.0014 },
        budget: { tokens: 500, costUsd: null, onExceeded: 'wait' },
      }),
      ev('budget-extended', 2300, {
        budget: { tokens: 5000, costUsd: null, onExceeded: 'wait' },
        by: { keyId: 'k', keyName: 'lead' },
      }),
      ev('run-completed', 2400, { result: 'done' }),
    ];
    const model = buildTimeline(events, T0 + 9999);
    expect([model.tokens, model.costUsd]).toEqual([800, 0.0014]);
    expect(model.spans.map((s) => [s.kind, s.durationMs, s.facts.join(' · ')])).toEqual([
      ['model', 100, '300 in / 100 out tokens · $0.0014'],
      ['model', 100, '300 in / 100 out tokens'],
      ['budget', 2000, 'spent 800 tokens, $0.0014 · extended by lead'],
    ]);
    // No turn priced: tokens, and no cost at all (not $0).
    expect(buildTimeline([ev('run-started', 0, {}), turn(1, 100)], T0 + 200).costUsd).toBeNull();
  });

  it('writes costs in dollars: cents with two decimals, less with two significant digits', () => {
    expect([0, 12.4, 0.01, 0.0042, 0.0014, 0.000125, 0.0000001].map(usd)).toEqual([
      '$0',
      '$12.40',
      '$0.01',
      '$0.0042',
      '$0.0014',
      '$0.00013',
      'under $0.000001',
    ]);
  });
});

describe('JSON highlighting', () => {
  it('classes keys, strings, numbers and literals and escapes what it shows', () => {
    const html = renderToString(
      h('pre', null, highlightJson({ a: '<b>"x"</b>', n: -1.5e3, t: true, z: null, list: [1, 'two'] })),
    );
    expect(html).toContain('<span class="j-key">&quot;a&quot;</span>:');
    expect(html).toContain('<span class="j-str">&quot;&lt;b>\\&quot;x\\&quot;&lt;/b>&quot;</span>');
    expect(html).toContain('<span class="j-num">-1500</span>');
    expect(html).toContain('<span class="j-lit">true</span>');
    expect(html).toContain('<span class="j-lit">null</span>');
    expect(html).not.toContain('<b>');
  });
});
