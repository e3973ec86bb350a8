import { describe, expect, it } from 'vitest';
import { expectWholeEvents } from './helpers/api.js';
import { startRunsStack, useRunsStack } from './helpers/stack.js';

// The model endpoint fails in each way a real one can: it answers 500, answers garbage, or is not
// there at all (the Anthropic endpoint is closed: connection refused). Each such run ends Failed with a
// code and a reason, while the same worker keeps serving a healthy run started at the same time.
// One `mt serve` and no other worker: the run that fails and the run that succeeds share it.
const stack = useRunsStack(async () => {
  const started = await startRunsStack({ servers: 1 });
  await started.anthropic.server.close();
  return started;
});

async function failsWhileAnotherRunCompletes(
  failing: { interaction: string; place: string },
  healthyPlace: string,
  code: string,
) {
  const bad = await stack.api.startRun(failing.interaction, { place: failing.place });
  const good = await stack.api.startRun('weather', { place: healthyPlace });
  expect([bad.status, good.status]).toEqual([201, 201]);
  const [badRun, goodRun] = await Promise.all([
    stack.api.waitForEnd(bad.body.id, 45_000),
    stack.api.waitForEnd(good.body.id, 45_000),
  ]);
  expect(goodRun.status, JSON.stringify(goodRun)).toBe('Completed');
  expect(badRun.status, JSON.stringify(badRun)).toBe('Failed');
  expect(badRun.result).toBeNull();
  expect(badRun.error?.code).toBe(code);
  expect(badRun.error?.message.length).toBeGreaterThan(10);
  const events = await stack.api.events(badRun.id);
  expectWholeEvents(events);
  expect(events.at(-1)?.type).toBe('run-failed');
  return badRun;
}

describe('a failing model endpoint', { timeout: 60_000 }, () => {
  it('fails a run whose model answers 500, with a code, while another run completes', async () => {
    const run = await failsWhileAnotherRunCompletes(
      { interaction: 'weather', place: 'Lisbon [fail:500]' },
      'Madrid',
      'api:models:error',
    );
    expect(run.error?.message).toContain('500');
  });

  it('fails a run whose model answers with invalid JSON, with a code, while another run completes', async () => {
    await failsWhileAnotherRunCompletes(
      { interaction: 'weather', place: 'Lisbon [fail:garbage]' },
      'Vienna',
      'api:models:invalid-response',
    );
  });

  it('fails a run whose model answers JSON of the wrong shape, with a code, while another run completes', async () => {
    await failsWhileAnotherRunCompletes(
      { interaction: 'weather', place: 'Lisbon [fail:wrong-shape]' },
      'Rome',
      'api:models:invalid-response',
    );
  });

  it('fails a run whose model endpoint refuses connections, with a code, while another run completes', async () => {
    await failsWhileAnotherRunCompletes(
      { interaction: 'weather-claude', place: 'Lisbon' },
      'Berlin',
      'api:models:unreachable',
    );
    // The failures made no tool call.
    expect(stack.upstream.requests.filter((r) => r.url.includes('latitude=38.72'))).toHaveLength(0);
  });

  it('keeps the worker serving: a run after the failures completes', async () => {
    const started = await stack.api.startRun('weather', { place: 'Paris' });
    expect((await stack.api.waitForEnd(started.body.id)).status).toBe('Completed');
  });
});
