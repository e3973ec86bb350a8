import { dueTicks, nextTick } from '@maitento/lang';
import { describe, expect, it } from 'vitest';
import { compile, where } from './helpers.js';

// Schedules (`schedules/<name>.mtr`, docs/schedules-and-triggers.md): an interaction started at every tick of a cron
// expression in an IANA time zone, checked by mt check like every resource.
const agent = 'model = "openai:gpt-4o-mini"\ninstructions = "Triage."\n';
const triage = `agent = { name = "Triage" agent = @ref("a") }
task = "Triage the tickets of %%queue%% (%%limit%%)"
inputs.prompts = [
  { name = "queue" required = true },
  { name = "limit" default = "20" },
]
`;
const repo = (schedule: string) =>
  compile({ 'agents/a.mtr': agent, 'interactions/one-shot/triage.mtr': triage, 'schedules/morning.mtr': schedule });

describe('schedules', () => {
  it('builds a schedule with its defaults', () => {
    const compiled = repo('interaction = @ref("triage")\ninputs = { queue = "support" }\ncron = "0 8 * * MON-FRI"\n');
    expect(where(compiled.diagnostics)).toEqual([]);
    expect(compiled.schedules).toEqual([
      {
        kind: 'schedule',
        name: 'morning',
        interaction: 'triage',
        inputs: { queue: 'support' },
        cron: '0 8 * * MON-FRI',
        timezone: 'UTC',
        overlap: 'skip',
        missed: 'skip',
        enabled: true,
      },
    ]);
    const full = repo(
      'interaction = @ref("triage")\ninputs = { queue = "q" }\ncron = "*/5 * * * * *"\ntimezone = "Europe/Paris"\noverlap = "queue-one"\nmissed = "run-once"\nenabled = false\n',
    );
    expect(where(full.diagnostics)).toEqual([]);
    expect(full.schedules[0]).toMatchObject({ overlap: 'queue-one', missed: 'run-once', enabled: false });
  });

  it('refuses an invalid cron expression, an unknown zone (with did-you-mean) and unknown or missing inputs', () => {
    const bad = repo(
      'interaction = @ref("triage")\ninputs = { queu = "q" }\ncron = "61 * * * *"\ntimezone = "Europe/Pariss"\n',
    );
    expect(where(bad.diagnostics)).toEqual([
      'schedules/morning.mtr:2:10 mtr:schedule:input-required',
      'schedules/morning.mtr:2:19 mtr:schedule:input-unknown',
      'schedules/morning.mtr:3:8 mtr:schedule:cron',
      'schedules/morning.mtr:4:12 mtr:schedule:timezone',
    ]);
    const messages = bad.diagnostics.map((d) => d.message);
    expect(messages).toContain('interaction triage has no run input queu; did you mean "queue"?');
    expect(messages).toContain('timezone "Europe/Pariss" is not an IANA time zone; did you mean "Europe/Paris"?');
    expect(messages).toContain('cron Invalid value for minute: 61');
    expect(
      repo('interaction = @ref("triage")\ninputs = { queue = "q" }\ncron = "* * *"\n').diagnostics[0]?.message,
    ).toBe('cron has 3 fields; write 5 (minute hour day month weekday) or 6 (seconds first)');
  });

  it('names an interaction that is there, with did-you-mean', () => {
    const compiled = repo('interaction = @ref("triag")\ncron = "0 8 * * *"\n');
    expect(compiled.diagnostics.map((d) => [d.code, d.message])).toEqual([
      ['mtr:ref:unknown', '@ref("triag") names no interaction'],
    ]);
  });

  it('reads ticks in the time zone, across the change to summer time in Europe/Paris', () => {
    // 29 March 2026: 02:00 local does not exist (clocks go from 02:00 to 03:00 CET→CEST).
    const ticks = dueTicks(
      '30 2 * * *',
      'Europe/Paris',
      new Date('2026-03-27T12:00:00Z'),
      new Date('2026-03-31T12:00:00Z'),
      10,
    );
    expect(ticks.ticks.map((t) => t.toISOString())).toEqual([
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:00:00.000Z', // the skipped 02:30 fires at the first instant after the gap, 03:00 CEST
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
      '2026-03-31T00:30:00.000Z',
    ]);
    // Back to winter time on 25 October 2026: 02:30 happens twice and fires once.
    expect(nextTick('30 2 * * *', 'Europe/Paris', new Date('2026-10-24T12:00:00Z'))?.toISOString()).toBe(
      '2026-10-25T00:30:00.000Z',
    );
    expect(nextTick('30 2 * * *', 'Europe/Paris', new Date('2026-10-25T00:30:00Z'))?.toISOString()).toBe(
      '2026-10-26T01:30:00.000Z',
    );
    // Every second over a day: the first ticks listed, and the latest known without listing them all.
    const many = dueTicks('* * * * * *', 'UTC', new Date('2026-01-01T00:00:00Z'), new Date('2026-01-02T00:00:00Z'), 3);
    expect(many).toMatchObject({ more: true, latest: new Date('2026-01-02T00:00:00Z') });
    expect(many.ticks).toHaveLength(3);
  });
});

// Triggers (`triggers/<name>.mtr`): inbound webhooks, their payload mapped to the interaction's run inputs.
describe('triggers', () => {
  const withTrigger = (trigger: string) =>
    compile({ 'agents/a.mtr': agent, 'interactions/one-shot/triage.mtr': triage, 'triggers/shop.mtr': trigger });

  it('builds a trigger with its defaults', () => {
    const compiled = withTrigger(
      'interaction = @ref("triage")\ninputs = { queue = { pointer = "/data/queue" default = "support" } }\nverify = { style = "stripe" secret = @ref("shop-hook") }\n',
    );
    expect(where(compiled.diagnostics)).toEqual([]);
    expect(compiled.triggers).toEqual([
      {
        kind: 'trigger',
        name: 'shop',
        interaction: 'triage',
        inputs: { queue: { pointer: '/data/queue', default: 'support' } },
        verify: { style: 'stripe', secret: 'shop-hook', toleranceSeconds: 300 },
        maxBodyBytes: 262_144,
        enabled: true,
      },
    ]);
  });

  it('refuses a pointer without its slash, an unknown style, an unmapped required input and a body limit too large', () => {
    const compiled = withTrigger(
      'interaction = @ref("triage")\ninputs = { limt = { pointer = "data/limit" } }\nverify = { style = "gitlab" secret = @ref("s") }\nmaxBodyBytes = 5000000\n',
    );
    expect(compiled.diagnostics.map((d) => [d.code, d.message])).toEqual([
      [
        'mtr:property:value',
        'inputs.limt.pointer is "data/limit"; a JSON Pointer (RFC 6901) is "" (the whole payload) or starts with "/", such as "/data/order_id"',
      ],
      ['mtr:property:value', 'verify.style is "gitlab"; it must be one of "standard-webhooks", "github", "stripe"'],
    ]);
    const big = withTrigger(
      'interaction = @ref("triage")\ninputs = { queue = { pointer = "/q" } }\nverify = { style = "github" secret = @ref("s") }\nmaxBodyBytes = 5000000\n',
    );
    expect(where(big.diagnostics)).toEqual(['triggers/shop.mtr:4:16 mtr:trigger:max-body']);
    const inputs = withTrigger(
      'interaction = @ref("triage")\ninputs = { limt = { pointer = "/limit" } }\nverify = { style = "github" secret = @ref("s") }\n',
    );
    expect(inputs.diagnostics.map((d) => [d.code, d.message])).toEqual([
      ['mtr:trigger:input-required', 'inputs maps no queue, which interaction triage requires (a prompt input)'],
      ['mtr:trigger:input-unknown', 'interaction triage has no run input limt; did you mean "limit"?'],
    ]);
  });

  // A chaining trigger (`on`): the end of another interaction's run starts one, its values mapped by pointer.
  it('builds a chaining trigger, with Completed as its default end', () => {
    const compiled = withTrigger(
      'interaction = @ref("triage")\non = { runCompleted = @ref("triage") }\ninputs = { queue = { pointer = "/result" } }\n',
    );
    expect(where(compiled.diagnostics)).toEqual([]);
    expect(compiled.triggers).toEqual([
      {
        kind: 'trigger',
        name: 'shop',
        interaction: 'triage',
        inputs: { queue: { pointer: '/result' } },
        on: { runCompleted: 'triage', statuses: ['Completed'] },
        maxBodyBytes: 262_144,
        enabled: true,
      },
    ]);
    const both = withTrigger(
      'interaction = @ref("triage")\non = { runCompleted = @ref("triage") status = ["Completed", "Failed"] }\ninputs = { queue = { pointer = "/inputs/queue" } }\n',
    );
    expect(where(both.diagnostics)).toEqual([]);
    expect(both.triggers[0]?.on).toEqual({ runCompleted: 'triage', statuses: ['Completed', 'Failed'] });
  });

  it('refuses a trigger with neither verify nor on, or both, and says what a misspelling meant', () => {
    const neither = withTrigger('interaction = @ref("triage")\ninputs = { queue = { pointer = "/q" } }\n');
    expect(neither.diagnostics.map((d) => [d.code, d.message])).toEqual([
      ['mtr:trigger:source', 'the trigger gives neither verify (an inbound webhook) nor on (another run ending)'],
    ]);
    const both = withTrigger(
      'interaction = @ref("triage")\ninputs = { queue = { pointer = "/q" } }\nverify = { style = "github" secret = @ref("s") }\non = { runCompleted = @ref("triage") }\n',
    );
    expect(where(both.diagnostics)).toEqual(['triggers/shop.mtr:4:6 mtr:trigger:source']);
    const webhookOnly = withTrigger(
      'interaction = @ref("triage")\ninputs = { queue = { pointer = "/q" } }\non = { runCompleted = @ref("triage") }\neventId = "/id"\n',
    );
    expect(webhookOnly.diagnostics.map((d) => d.code)).toEqual(['mtr:trigger:source']);
    expect(webhookOnly.diagnostics[0]?.message).toContain('eventId, which only an inbound webhook has');
    const misspelled = withTrigger(
      'interaction = @ref("triage")\ninputs = { queue = { pointer = "/q" } }\non = { runComplete = @ref("triage") status = ["Complete"] }\n',
    );
    const messages = misspelled.diagnostics.map((d) => `${d.message} (${d.hint ?? ''})`).join('\n');
    expect(messages).toContain('did you mean "runCompleted"');
    expect(messages).toContain('"Completed"');
    const unknown = withTrigger(
      'interaction = @ref("triage")\ninputs = { queue = { pointer = "/q" } }\non = { runCompleted = @ref("triag") }\n',
    );
    expect(unknown.diagnostics.map((d) => `${d.message} (${d.hint ?? ''})`).join('\n')).toContain(
      'did you mean "triage"',
    );
  });
});
