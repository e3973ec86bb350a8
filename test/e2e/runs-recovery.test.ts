import { describe, expect, it } from 'vitest';
import { expectWholeEvents } from './helpers/api.js';
import { expectOneCallOrSameKey, holdFirst, killSender } from './helpers/recovery.js';
import { useRunsStack } from './helpers/stack.js';

// A run survives the death of the process executing it: two `mt serve` and two `mt worker` processes
// share one PostgreSQL database; the process making a slow POST is killed with SIGKILL mid-call, and
// another one finishes the run from its last stored step.
const stack = useRunsStack({ servers: 2, workers: 2 });

describe('a worker killed with SIGKILL during a run', { timeout: 90_000 }, () => {
  it('loses nothing: another process resumes the run within 15 s and completes it, its events are whole, the POST is retried with the same Idempotency-Key', async () => {
    const isTicket = (r: { method: string; url: string }) => r.method === 'POST' && r.url === '/tickets';
    const held = holdFirst(stack, isTicket);
    const started = await stack.api.startRun('open-ticket', { message: 'My lamp arrived broken' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const request = await held;
    expect(JSON.parse(request.body)).toEqual({ subject: 'Broken lamp' });
    await killSender(stack, request);
    const killedAt = Date.now();
    // pg-boss retries the job once its heartbeat (10 s) is missed; another process takes it and retries the call,
    // 13 s after the last heartbeat at worst (decision 0201): within 15 s of the kill.
    const deadline = killedAt + 15_000;
    while (stack.upstream.requests.filter(isTicket).length < 2) {
      expect(Date.now() < deadline, 'the run was not resumed within 15 s of the kill').toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    const run = await stack.api.waitForEnd(started.body.id, 60_000);
    expect(run.status, JSON.stringify(run)).toBe('Completed');
    expect(run.result).toContain('T-9');
    const events = await stack.api.events(run.id);
    expectWholeEvents(events);
    expect(events.filter((e) => e.type === 'run-completed')).toHaveLength(1);
    const calls = stack.upstream.requests.filter(isTicket);
    // The held call was never answered, so the run could only finish by retrying it: once, same key.
    expect(calls).toHaveLength(2);
    expectOneCallOrSameKey(calls);
  });

  it('runs the next run normally on the processes that are left', async () => {
    const started = await stack.api.startRun('weather', { place: 'Vienna' });
    const run = await stack.api.waitForEnd(started.body.id);
    expect(run.status, JSON.stringify(run)).toBe('Completed');
  });
});
