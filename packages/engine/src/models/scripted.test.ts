import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { afterAll, describe, expect, it } from 'vitest';
import { scriptedModel } from './scripted.js';

// issue #22: a wrong script fails with the code and the file named, instead of playing as "no more turns".
const dir = mkdtempSync(join(tmpdir(), 'mt-scripts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const firstTurn = { prompt: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] } as LanguageModelV4CallOptions;

async function play(name: string, content: string) {
  writeFileSync(join(dir, `${name}.json`), content);
  return scriptedModel(name, dir).doGenerate(firstTurn);
}

describe('the scripted stand-in', () => {
  it('plays a good script', async () => {
    const result = await play('good', JSON.stringify([{ toolCalls: [{ name: 'get-order', arguments: {} }] }]));
    expect(result.content).toMatchObject([{ type: 'tool-call', toolName: 'get-order' }]);
  });

  it.each([
    ['typo', '[{"txt": "hello"}]', /typo\.json: turn 1 has an unknown key "txt"; a turn is \{"text"/],
    ['broken', '[{"text": "hello"', /broken\.json: not valid JSON \(/],
    ['object', '{"text": "hello"}', /object\.json: not a JSON array of turns/],
    [
      'both',
      '[{"text": "a", "toolCalls": []}]',
      /both\.json: turn 1 needs exactly one of "text", "object" and "toolCalls"/,
    ],
    ['noname', '[{"toolCalls": [{"nme": "x"}]}]', /noname\.json: turn 1, tool call 1 has no "name"/],
  ])(
    'fails on a wrong script (%s) with api:models:invalid-response naming the file',
    async (name, content, message) => {
      const error = await play(name, content).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'api:models:invalid-response' });
      expect((error as Error).message).toContain(join(dir, `${name}.json`));
      expect((error as Error).message).toMatch(message);
    },
  );

  // issue #45: after a failed call, the script's words could claim a success.
  const afterCall = (output: { type: 'text' | 'error-text'; value: string }) =>
    ({
      prompt: [
        { role: 'user', content: [{ type: 'text', text: 'the weather in Lisbon?' }] },
        {
          role: 'assistant',
          content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'get-weather', input: {} }],
        },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'get-weather', output }] },
      ],
    }) as LanguageModelV4CallOptions;
  const failed = afterCall({
    type: 'error-text',
    value: JSON.stringify({ error: 'The upstream answered HTTP 422', code: 'api:gateway:upstream-error', status: 422 }),
  });
  const weather = [{ toolCalls: [{ name: 'get-weather', arguments: {} }] }, { text: 'Lisbon: clear sky' }];

  it('replaces a text turn after a failed call with words that report the failure', async () => {
    writeFileSync(join(dir, 'weather.json'), JSON.stringify(weather));
    const result = await scriptedModel('weather', dir).doGenerate(failed);
    expect(result.content).toEqual([
      {
        type: 'text',
        text: '[scripted stand-in weather: the call of get-weather failed: api:gateway:upstream-error: The upstream answered HTTP 422; the script has no "onToolError" turn for it]',
      },
    ]);
    // The same turn after a call that succeeded plays as written.
    const ok = await scriptedModel('weather', dir).doGenerate(afterCall({ type: 'text', value: '{"t":20}' }));
    expect(ok.content).toEqual([{ type: 'text', text: 'Lisbon: clear sky' }]);
  });

  it("plays a turn's onToolError after a failed call, and not after a person rejected the call", async () => {
    const script = [weather[0], { text: 'Lisbon: clear sky', onToolError: { text: 'The weather service failed.' } }];
    writeFileSync(join(dir, 'branch.json'), JSON.stringify(script));
    const result = await scriptedModel('branch', dir).doGenerate(failed);
    expect(result.content).toEqual([{ type: 'text', text: 'The weather service failed.' }]);
    const rejected = afterCall({
      type: 'error-text',
      value: JSON.stringify({ error: 'Rejected: not now', code: 'api:approvals:rejected' }),
    });
    const played = await scriptedModel('branch', dir).doGenerate(rejected);
    expect(played.content).toEqual([{ type: 'text', text: 'Lisbon: clear sky' }]);
  });

  it('checks an onToolError turn as a turn', async () => {
    const error = await play('badbranch', '[{"text": "a", "onToolError": {"txt": "b"}}]').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'api:models:invalid-response' });
    expect((error as Error).message).toMatch(/turn 1's "onToolError" has an unknown key "txt"/);
  });
});
