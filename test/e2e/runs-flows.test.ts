import { rm } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { expectWholeEvents } from './helpers/api.js';
import { runsRepoFiles, writeRepo } from './helpers/config-repo.js';
import { ORDERS_SECRET, useRunsStack } from './helpers/stack.js';
import { runMt } from './support/harness.js';

// The seed's weather and support flows end to end on PostgreSQL: the real `mt serve` and `mt worker`
// processes, a fake OpenAI Chat Completions server and a fake Anthropic Messages server that play the
// model's part, and a real upstream on 127.0.0.1 that records the calls the tools make.
const stack = useRunsStack({ servers: 1, workers: 1 });
const temp: string[] = [];

afterAll(async () => {
  for (const dir of temp) await rm(dir, { recursive: true, force: true });
});

function mt(args: string[]) {
  return runMt(args, {
    home: stack.home,
    env: { MT_API_URL: stack.api.url, MT_API_KEY: stack.adminKey, MT_EGRESS_ALLOW: '127.0.0.1' },
  });
}

const forecastCalls = (latitude: number) =>
  stack.upstream.requests.filter((r) => r.url.includes('/forecast') && r.url.includes(`latitude=${latitude}`));
const openaiRequestsFor = (text: string) =>
  stack.openai.server.requests.filter((r) => r.conversation.userTexts.some((t) => t.includes(text)));

describe('runs on PostgreSQL through the real server and worker processes', { timeout: 60_000 }, () => {
  it('runs the weather flow through the REST API: the tool is offered, called with the run binding, and the answer is the result', async () => {
    const started = await stack.api.startRun('weather', { place: 'London' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    expect(started.body).toMatchObject({
      interaction: { name: 'weather', version: 1 },
      interactive: true,
      inputs: { place: 'London' },
      pendingApproval: null,
    });
    const run = await stack.api.waitForEnd(started.body.id);
    expect(run.status, JSON.stringify(run)).toBe('Completed');
    expect(run.error).toBeNull();
    expect(run.result).toContain('Weather report:');
    expect(run.result).toContain('21.5');
    expect(run.versions).toEqual(
      expect.arrayContaining([
        { kind: 'interaction', name: 'weather', version: 1 },
        { kind: 'agent', name: 'weather-assistant', version: 1 },
        { kind: 'tool', name: 'current-weather', version: 1 },
        { kind: 'connector', name: 'open-meteo-forecast', version: 1 },
      ]),
    );

    // The upstream got one GET with the model's arguments, the fixed binding and the run's default.
    const calls = forecastCalls(51.5);
    expect(calls).toHaveLength(1);
    const url = new URL(calls[0].url, 'http://x');
    expect(calls[0].method).toBe('GET');
    expect(url.pathname).toBe('/v1/forecast');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      latitude: '51.5',
      longitude: '-0.13',
      current: 'temperature_2m,wind_speed_10m,weather_code',
      temperature_unit: 'celsius',
    });

    // The model was given the agent's instructions, the task, the tool, and then the tool's result.
    const asked = openaiRequestsFor('What is the weather like now in London?');
    expect(asked).toHaveLength(2);
    expect(asked[0].conversation.system).toContain('You tell people the current weather of a place.');
    expect(asked[0].conversation.tools.map((t) => t.name)).toEqual(['current-weather']);
    const schema = JSON.stringify(asked[0].conversation.tools[0].inputSchema);
    expect(schema).toContain('query.latitude');
    expect(schema).not.toContain('query.current');
    expect(schema).not.toContain('query.temperature_unit');
    expect(asked[1].conversation.toolResults).toHaveLength(1);
    expect(asked[1].conversation.toolResults[0].toolName).toBe('current-weather');
    expect(asked[1].conversation.toolResults[0].content).toContain('21.5');
    expect(asked[0].headers.authorization).toBe('Bearer test-openai-key');

    const events = await stack.api.events(run.id);
    expectWholeEvents(events);
    const types = events.map((e) => e.type);
    expect(types.at(-1)).toBe('run-completed');
    expect(types.filter((t) => t === 'model-response')).toHaveLength(2);
    expect(types.filter((t) => t === 'tool-result')).toHaveLength(1);
  });

  it('runs the support flow through the CLI (mt interaction-run --wait --json), sending the secret only to the upstream', async () => {
    const result = await mt([
      'interaction-run',
      'support-desk',
      '--input',
      'message=Where is my order B-2002?',
      '--wait',
      '--json',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const run = JSON.parse(result.stdout);
    expect(run).toMatchObject({ status: 'Completed', pendingApproval: null, error: null });
    expect(run.id).toEqual(expect.any(String));
    expect(run.result).toContain('Order status:');
    expect(run.result).toContain('delivered');

    const calls = stack.upstream.requests.filter((r) => r.url === '/orders/B-2002');
    expect(calls).toHaveLength(1);
    expect(calls[0].headers['x-api-key']).toBe(ORDERS_SECRET);

    const status = await mt(['interaction-status', run.id, '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ id: run.id, status: 'Completed' });
    const logs = await mt(['interaction-logs', run.id]);
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toContain('get-order');

    // The secret's value reaches the upstream and nothing else: not the model, the events, the CLI or the logs.
    const events = await stack.api.events(run.id);
    expectWholeEvents(events);
    const seenByModel = JSON.stringify(openaiRequestsFor('B-2002').map((r) => r.body));
    for (const text of [
      JSON.stringify(events),
      seenByModel,
      result.stdout,
      result.stderr,
      logs.stdout,
      stack.servers[0].log(),
      stack.workers[0].log(),
    ]) {
      expect(text).not.toContain(ORDERS_SECRET);
    }
  });

  it('runs the weather flow on an Anthropic model through the Messages API', async () => {
    const started = await stack.api.startRun('weather-claude', { place: 'Oslo', temperatureUnit: 'fahrenheit' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const run = await stack.api.waitForEnd(started.body.id);
    expect(run.status, JSON.stringify(run)).toBe('Completed');
    expect(run.result).toContain('21.5');

    const calls = forecastCalls(59.91);
    expect(calls).toHaveLength(1);
    expect(new URL(calls[0].url, 'http://x').searchParams.get('temperature_unit')).toBe('fahrenheit');

    const asked = stack.anthropic.server.requests.filter((r) =>
      r.conversation.userTexts.some((t) => t.includes('Oslo')),
    );
    expect(asked).toHaveLength(2);
    expect(asked[0].path).toBe('/v1/messages');
    expect(asked[0].headers['x-api-key']).toBe('test-anthropic-key');
    expect(asked[0].conversation.model).toBe('claude-sonnet-4-5');
    expect(asked[0].conversation.system).toContain('You tell people the current weather of a place.');
    expect(asked[0].conversation.tools.map((t) => t.name)).toEqual(['current-weather']);
    expect(asked[1].conversation.toolResults).toHaveLength(1);
    expect(asked[1].conversation.toolResults[0]).toMatchObject({ toolName: 'current-weather' });
    expect(asked[1].conversation.toolResults[0].content).toContain('21.5');
    expect(openaiRequestsFor('Oslo')).toHaveLength(0);
    expectWholeEvents(await stack.api.events(run.id));
  });

  it('refuses a run with a missing, empty, malformed or unknown input with a code and status, and stores no run', async () => {
    const before = await stack.api.request('GET', '/v1/runs?limit=200');
    const missing = await stack.api.startRun('weather', {});
    expect([missing.status, missing.body.code]).toEqual([422, 'api:interactions:input-required']);
    expect(missing.body.error).toContain('place');
    const empty = await stack.api.startRun('weather', { place: '' });
    expect([empty.status, empty.body.code]).toEqual([422, 'api:interactions:input-required']);

    const notAGuid = await stack.api.startRun('support-any-shop', {
      message: 'Where is A-1?',
      shopKey: 'my-shop-key-value',
    });
    expect([notAGuid.status, notAGuid.body.code]).toEqual([422, 'api:interactions:input-invalid']);
    expect(notAGuid.body.error).toContain('shopKey');

    const unknown = await stack.api.startRun('weather', { place: 'Rome', plce: 'Rome' });
    expect(unknown.status).toBe(422);
    expect(unknown.body.code).toMatch(/^api:interactions:input-/);
    expect(unknown.body.error).toContain('plce');
    expect(unknown.body.error).toMatch(/did you mean/i);

    const noSuch = await stack.api.startRun('wether', { place: 'Rome' });
    expect([noSuch.status, noSuch.body.code]).toEqual([404, 'api:interactions:not-found']);

    const after = await stack.api.request('GET', '/v1/runs?limit=200');
    expect(after.status).toBe(200);
    expect(after.body.runs.length).toBe(before.body.runs.length);
    expect(forecastCalls(41.9)).toHaveLength(0);
  });

  it('keeps calling the versions a run started with when a new version is deployed during the run', async () => {
    const started = await stack.api.startRun('weather', { place: 'Paris [gate:deploy]' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    await stack.openai.reached('deploy');
    // Deployed with the CLI from a folder, as a user would: the connector moves to /v2/forecast.
    const repo = await writeRepo(runsRepoFiles({ origin: stack.upstream.origin, forecastPath: '/v2/forecast' }));
    temp.push(repo);
    const deployed = await mt(['deploy', repo, '--json']);
    expect(deployed.code, deployed.stderr).toBe(0);
    const changes: { kind: string; name: string; version: number }[] = JSON.parse(deployed.stdout).changes;
    expect(changes).toContainEqual(
      expect.objectContaining({ kind: 'connector', name: 'open-meteo-forecast', version: 2 }),
    );
    stack.openai.open('deploy');

    const run = await stack.api.waitForEnd(started.body.id);
    expect(run.status, JSON.stringify(run)).toBe('Completed');
    expect(run.versions).toContainEqual({ kind: 'connector', name: 'open-meteo-forecast', version: 1 });
    const calls = forecastCalls(48.85);
    expect(calls.map((c) => new URL(c.url, 'http://x').pathname)).toEqual(['/v1/forecast']);

    // A run started after the deploy uses the new version.
    const later = await stack.api.startRun('weather', { place: 'Berlin' });
    const laterRun = await stack.api.waitForEnd(later.body.id);
    expect(laterRun.status).toBe('Completed');
    expect(forecastCalls(52.52).map((c) => new URL(c.url, 'http://x').pathname)).toEqual(['/v2/forecast']);
  });
});
