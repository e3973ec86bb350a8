import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { APICallError, generateText, jsonSchema, type LanguageModel, type ModelMessage, streamText, tool } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeAnthropic, createFakeOpenAI, type FakeModelOptions, type FakeModelServer } from './fake-models.js';

const weather = tool({
  description: 'Current weather at a place',
  inputSchema: jsonSchema<{ latitude: number; longitude: number }>({
    type: 'object',
    properties: { latitude: { type: 'number' }, longitude: { type: 'number' } },
    required: ['latitude', 'longitude'],
  }),
});

const providers: Array<{
  name: string;
  start: (o?: FakeModelOptions) => Promise<FakeModelServer>;
  model: (url: string) => LanguageModel;
}> = [
  {
    name: 'openai',
    start: createFakeOpenAI,
    model: (url) => createOpenAI({ baseURL: url, apiKey: 'test' }).chat('gpt-4o-mini'),
  },
  {
    name: 'anthropic',
    start: createFakeAnthropic,
    model: (url) => createAnthropic({ baseURL: url, apiKey: 'test' })('claude-sonnet-4-5'),
  },
];

let fake: FakeModelServer | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe.each(providers)('fake $name model server', ({ name, start, model }) => {
  it('returns a scripted tool call with its name and arguments, and records the tools it was offered', async () => {
    fake = await start({
      script: [{ toolCalls: [{ name: 'weather', arguments: { latitude: 51.5, longitude: -0.13 } }] }],
    });
    const result = await generateText({
      model: model(fake.url),
      system: 'You are helpful.',
      prompt: 'Weather in London?',
      tools: { weather },
      maxRetries: 0,
    });
    expect(result.toolCalls).toHaveLength(1);
    expect(result.toolCalls[0].toolName).toBe('weather');
    expect(result.toolCalls[0].input).toEqual({ latitude: 51.5, longitude: -0.13 });
    expect(result.finishReason).toBe('tool-calls');
    expect(fake.requests).toHaveLength(1);
    const seen = fake.requests[0].conversation;
    expect(seen.system).toBe('You are helpful.');
    expect(seen.userTexts).toEqual(['Weather in London?']);
    expect(seen.tools.map((t) => t.name)).toEqual(['weather']);
    expect(seen.tools[0].description).toBe('Current weather at a place');
    expect(seen.tools[0].inputSchema).toMatchObject({ properties: { latitude: { type: 'number' } } });
    expect(fake.requests[0].path).toBe(name === 'openai' ? '/v1/chat/completions' : '/v1/messages');
  });

  it('returns a text turn as text, with token usage', async () => {
    fake = await start({ script: [{ text: 'It is sunny.' }] });
    const result = await generateText({ model: model(fake.url), prompt: 'Weather?', maxRetries: 0 });
    expect(result.text).toBe('It is sunny.');
    expect(result.finishReason).toBe('stop');
    expect(result.usage.inputTokens).toBe(11);
    expect(result.usage.outputTokens).toBe(7);
  });

  it('records the tool results it is sent, with the tool name, and a script function can answer from them', async () => {
    fake = await start({
      script: [
        { toolCalls: [{ name: 'weather', arguments: { latitude: 1, longitude: 2 }, id: 'call-1' }] },
        (request) => ({ text: `saw: ${request.conversation.toolResults[0]?.content}` }),
      ],
    });
    const first = await generateText({ model: model(fake.url), prompt: 'Weather?', tools: { weather }, maxRetries: 0 });
    const messages: ModelMessage[] = [
      { role: 'user', content: 'Weather?' },
      ...first.response.messages,
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: first.toolCalls[0].toolCallId,
            toolName: 'weather',
            output: { type: 'text', value: 'The call was not made: rejected by a person.' },
          },
        ],
      },
    ];
    const second = await generateText({ model: model(fake.url), messages, tools: { weather }, maxRetries: 0 });
    expect(second.text).toBe('saw: The call was not made: rejected by a person.');
    const seen = fake.requests[1].conversation;
    expect(seen.toolCalls).toEqual([{ id: 'call-1', name: 'weather', arguments: { latitude: 1, longitude: 2 } }]);
    expect(seen.toolResults).toHaveLength(1);
    expect(seen.toolResults[0]).toMatchObject({ toolCallId: 'call-1', toolName: 'weather' });
  });

  it('answers a scripted 500 so that the SDK throws an APICallError with that status', async () => {
    fake = await start({ script: [{ fail: 'status', status: 500, message: 'boom' }] });
    const error = await generateText({ model: model(fake.url), prompt: 'hi', maxRetries: 0 }).catch((e) => e);
    expect(APICallError.isInstance(error)).toBe(true);
    expect((error as APICallError).statusCode).toBe(500);
    expect((error as APICallError).message).toContain('boom');
  });

  it('answers invalid JSON and a wrong shape so that the SDK fails', async () => {
    fake = await start({ script: [{ fail: 'invalid-json' }, { fail: 'wrong-shape' }] });
    await expect(generateText({ model: model(fake.url), prompt: 'hi', maxRetries: 0 })).rejects.toThrow();
    await expect(generateText({ model: model(fake.url), prompt: 'hi', maxRetries: 0 })).rejects.toThrow();
    expect(fake.requests).toHaveLength(2);
  });

  it('refuses connections once closed and serves again on the same port once reopened', async () => {
    fake = await start({ respond: () => ({ text: 'back' }) });
    await fake.close();
    const error = await generateText({ model: model(fake.url), prompt: 'hi', maxRetries: 0 }).catch((e) => e);
    expect(APICallError.isInstance(error)).toBe(true);
    expect(JSON.stringify((error as APICallError).cause ?? '') + String(error)).toMatch(/ECONNREFUSED|fetch failed/);
    await fake.reopen();
    const result = await generateText({ model: model(fake.url), prompt: 'hi', maxRetries: 0 });
    expect(result.text).toBe('back');
  });

  it('hangs for the given time, then drops the connection', async () => {
    fake = await start({ script: [{ fail: 'hang', ms: 300 }] });
    const started = Date.now();
    await expect(generateText({ model: model(fake.url), prompt: 'hi', maxRetries: 0 })).rejects.toThrow();
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
  });

  it('streams a tool call and text when asked to stream', async () => {
    fake = await start({
      script: [{ text: 'Checking.', toolCalls: [{ name: 'weather', arguments: { latitude: 3, longitude: 4 } }] }],
    });
    const result = streamText({ model: model(fake.url), prompt: 'Weather?', tools: { weather }, maxRetries: 0 });
    expect(await result.text).toBe('Checking.');
    const calls = await result.toolCalls;
    expect(calls.map((c) => [c.toolName, c.input])).toEqual([['weather', { latitude: 3, longitude: 4 }]]);
    expect(fake.requests[0].conversation.stream).toBe(true);
  });

  it('answers a used-up script with a 500 that says so', async () => {
    fake = await start({ script: [] });
    const error = await generateText({ model: model(fake.url), prompt: 'hi', maxRetries: 0 }).catch((e) => e);
    expect((error as APICallError).statusCode).toBe(500);
    expect(String((error as Error).message)).toContain('script used up');
  });
});
