import { describe, expect, it } from 'vitest';
import { expectWholeEvents } from './helpers/api.js';
import { pidOfLocalPort, type WorkerProcess } from './helpers/processes.js';
import { useRunsStack } from './helpers/stack.js';
import { defaultUpstreamAnswer, type UpstreamRequest } from './helpers/upstream.js';

// A graceful stop drains: one `mt serve` (its own worker kept busy by a run held at the model, one run at a
// time) and one `mt worker` on one PostgreSQL database. The worker is sent SIGTERM while its POST is at a slow
// upstream: the POST finishes, its result is stored, the worker exits, and the server's worker finishes the run.
const stack = useRunsStack(
  { servers: 1, workers: 0, env: { MT_WORKER_CONCURRENCY: '1' } },
  { closing: (s) => s.openai.open('busy') },
);

function exited(worker: WorkerProcess, ms: number): Promise<number | null> {
  const { child } = worker;
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`mt worker still running ${ms} ms after SIGTERM`)), ms);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

describe('SIGTERM to an mt worker during a slow POST', { timeout: 90_000 }, () => {
  it('waits for the POST: exactly one POST reaches the upstream, its result is stored, the run completes elsewhere', async () => {
    const isTicket = (r: { method: string; url: string }) => r.method === 'POST' && r.url === '/tickets';
    // The ticket POST is answered 2 s after it arrives.
    stack.upstream.setHandler(async (request: UpstreamRequest, res) => {
      if (isTicket(request)) await new Promise((resolve) => setTimeout(resolve, 2000));
      return defaultUpstreamAnswer(request, res);
    });
    // The server's worker takes a run that waits at the model, so the mt worker is the only one executing.
    const busy = await stack.api.startRun('support-desk', { message: 'Order A-1001, where is it? [gate:busy]' });
    expect(busy.status, JSON.stringify(busy.body)).toBe(201);
    await stack.openai.reached('busy');
    const worker = await stack.addWorker();

    const started = await stack.api.startRun('open-ticket', { message: 'My lamp arrived broken' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const request = await stack.upstream.waitFor(isTicket, 30_000);
    expect(await pidOfLocalPort(request.remotePort, [worker.pid])).toBe(worker.pid);
    worker.child.kill('SIGTERM');
    expect(await exited(worker, 30_000)).toBe(0);
    stack.workers.splice(stack.workers.indexOf(worker), 1);
    expect(worker.log()).toContain('stopped');

    // Before it exited, the worker stored the POST's result.
    const stored = await stack.api.events(started.body.id);
    expect(stored.filter((e) => e.type === 'tool-result')).toHaveLength(1);
    expect(stored.map((e) => e.type)).not.toContain('run-completed');

    // The server's worker is let go; it takes the handed-on run and finishes it without calling again.
    stack.openai.open('busy');
    const run = await stack.api.waitForEnd(started.body.id, 60_000);
    expect(run.status, JSON.stringify(run)).toBe('Completed');
    expect(run.result).toContain('T-9');
    expect(stack.upstream.requests.filter(isTicket)).toHaveLength(1);
    const events = await stack.api.events(run.id);
    expectWholeEvents(events);
    expect(events.filter((e) => e.type === 'tool-result')).toHaveLength(1);
    expect((await stack.api.waitForEnd(busy.body.id)).status).toBe('Completed');
  });
});
