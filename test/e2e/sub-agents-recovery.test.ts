import { describe, expect, it } from 'vitest';
import { expectWholeEvents, type RunView } from './helpers/api.js';
import { holdFirst, killSender } from './helpers/recovery.js';
import { useRunsStack } from './helpers/stack.js';
import { startSubAgentsStack } from './helpers/sub-agents-repo.js';

// A child run is a run like any other: the process executing it is SIGKILLed mid tool call, another one resumes
// the child from its stored events, and the parent (which held no worker meanwhile) takes its answer; the
// parent's call never starts a second child.
const stack = useRunsStack(() => startSubAgentsStack({ servers: 2, workers: 1 }));

describe('agents as tools when a worker dies', { timeout: 90_000 }, () => {
  it('loses nothing: the child is resumed elsewhere, its answer reaches the parent, and there is one child for the call', async () => {
    const isSlow = (r: { url: string }) => r.url.startsWith('/orders/SLOW-1');
    const held = holdFirst(stack, isSlow);
    const started = await stack.api.startRun('triage-slow', { message: 'Where is my order?' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const request = await held;
    await killSender(stack, request);
    const run = await stack.api.waitForEnd(started.body.id, 60_000);
    expect(run.status, JSON.stringify(run)).toBe('Completed');
    expect(run.result).toBe('Triage done.');

    const listed = await stack.api.request<{ runs: RunView[] }>('GET', '/v1/runs?limit=200');
    const children = listed.body.runs.filter((r) => r.parentRunId === run.id);
    expect(children).toHaveLength(1);
    expect(children[0]).toMatchObject({ status: 'Completed', agent: 'billing-slow-agent' });
    // The held call was never answered: the child finished only by making it again after the kill.
    expect(stack.upstream.requests.filter(isSlow)).toHaveLength(2);
    const childEvents = await stack.api.events(children[0]!.id);
    expectWholeEvents(childEvents);
    expect(childEvents.filter((e) => e.type === 'run-completed')).toHaveLength(1);
    const events = await stack.api.events(run.id);
    expectWholeEvents(events);
    expect(events.filter((e) => e.type === 'tool-call-started')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'tool-result').map((e) => e.data.result)).toEqual([
      'Order SLOW-1 was delivered.',
    ]);
  });
});
