import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { expectWholeEvents } from './helpers/api.js';
import { expectOneCallOrSameKey } from './helpers/recovery.js';
import { pidOfLocalPort, type WorkerProcess } from './helpers/processes.js';
import { useRunsStack } from './helpers/stack.js';
import { defaultUpstreamAnswer, type UpstreamRequest } from './helpers/upstream.js';

// The fault suite's SIGSTOP case (issue #41; docs/testing.md, "SIGSTOP"): a worker holding a run mid-tool-call is
// stopped (SIGSTOP) past pg-boss's heartbeat expiry (10 s); the supervisor retries the run's job and the other worker
// takes the run, retries the call with the same Idempotency-Key and completes it. Then the stopped worker is
// resumed (SIGCONT) with the answer of its own call waiting in its socket: its writes are refused by the run's
// fencing token (a later attempt holds the claim), nothing is written twice, and it goes on serving other runs.
// The server runs no worker (`--no-worker`): only the two `mt worker` processes execute runs.
const stack = useRunsStack({ servers: 1, workers: 2, serveArgs: ['--no-worker'] });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a worker SIGSTOPped mid-tool-call past its heartbeat, then resumed', { timeout: 90_000 }, () => {
  it('the run completes once on the other worker, the call goes at most twice with one key, the stale writes are refused, the stale worker serves on', async () => {
    const isTicket = (r: { method: string; url: string }) => r.method === 'POST' && r.url === '/tickets';
    // The first ticket call is held unanswered (its answer sent later, while its worker is stopped); later ones are
    // answered at once.
    let heldAnswer: ServerResponse | undefined;
    stack.upstream.setHandler((request, res) => {
      if (heldAnswer === undefined && isTicket(request)) {
        heldAnswer = res;
        return new Promise(() => {});
      }
      return defaultUpstreamAnswer(request, res);
    });
    const held = stack.upstream.waitFor(isTicket, 30_000);
    const started = await stack.api.startRun('open-ticket', { message: 'My lamp arrived broken' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const request: UpstreamRequest = await held;
    const pid = await pidOfLocalPort(
      request.remotePort,
      stack.workers.map((w) => w.pid),
    );
    expect(pid, 'the held call comes from one of the two workers').toBeDefined();
    const stale = stack.workers.find((w) => w.pid === pid)!;
    const other = stack.workers.find((w) => w.pid !== pid)!;

    process.kill(stale.pid, 'SIGSTOP');
    let resumed = false;
    try {
      const stoppedAt = Date.now();
      // pg-boss's supervisor retries the job once its heartbeat is 10 s old; the other worker takes the run and
      // retries the call, 13 s after the last heartbeat (before the stop) at worst (decision 0201).
      while (stack.upstream.requests.filter(isTicket).length < 2) {
        expect(Date.now() - stoppedAt < 15_000, 'the run was not taken over within 15 s of the stop').toBe(true);
        await sleep(50);
      }
      const run = await stack.api.waitForEnd(started.body.id, 20_000);
      expect(run.status, JSON.stringify(run)).toBe('Completed');
      expect(run.result).toContain('T-9');

      // The stopped worker's call is answered now (the bytes wait in its socket), then it is resumed: it reads the
      // answer and tries to store it as the run's tool result, fenced by a claim that is no longer its own.
      defaultUpstreamAnswer(request, heldAnswer!);
      process.kill(stale.pid, 'SIGCONT');
      resumed = true;
      const refused = Date.now() + 15_000;
      while (!stale.log().includes('run claimed by a later attempt or ended meanwhile') && Date.now() < refused)
        await sleep(100);
      expect(stale.log(), 'the resumed worker met the fence').toContain(
        'run claimed by a later attempt or ended meanwhile',
      );
    } finally {
      if (!resumed) process.kill(stale.pid, 'SIGCONT');
    }

    // One completion, one start and one result per call: the stale attempt wrote nothing.
    const events = await stack.api.events(started.body.id);
    expectWholeEvents(events);
    expect(events.filter((e) => e.type === 'run-completed')).toHaveLength(1);
    const perCall = (type: string) =>
      events.filter((e) => e.type === type).map((e) => (e.data as { toolCallId: string }).toolCallId);
    const starts = perCall('tool-call-started');
    expect(starts.length).toBeGreaterThan(0);
    expect(new Set(starts).size, JSON.stringify(starts)).toBe(starts.length);
    expect(perCall('tool-result').sort()).toEqual([...starts].sort());
    expect((await stack.api.getRun(started.body.id)).status).toBe('Completed');
    // The call went twice (the held one was not answered before the takeover), both with the call's one key.
    const calls = stack.upstream.requests.filter(isTicket);
    expect(calls).toHaveLength(2);
    expectOneCallOrSameKey(calls);

    // The stale worker serves on: with the other worker stopped, it alone executes the next run.
    await other.stop();
    stack.workers.splice(stack.workers.indexOf(other), 1);
    const next = await stack.api.startRun('weather', { place: 'Vienna' });
    expect(next.status, JSON.stringify(next.body)).toBe(201);
    const done = await stack.api.waitForEnd(next.body.id, 20_000);
    expect(done.status, JSON.stringify(done)).toBe('Completed');
    expect(stack.workers).toEqual([stale as WorkerProcess]);
  });
});
