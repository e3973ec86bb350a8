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
});
