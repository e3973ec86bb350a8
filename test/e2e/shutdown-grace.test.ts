import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, type RunView } from './helpers/api.js';
import { startServe, type WorkerProcess } from './helpers/processes.js';
import { runMt } from './support/harness.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';
import { defaultUpstreamAnswer, type UpstreamRequest } from './helpers/upstream.js';

// SIGTERM of `mt serve` and of `mt worker` while 8 tool calls hang on a frozen upstream (it accepts and never answers):
// readiness turns false first, the process exits within its grace (MT_SHUTDOWN_GRACE_MS, short here), and the runs
// are taken by another worker and complete, every replayed call carrying the Idempotency-Key of its first attempt.
// `mt worker` answers the same live/ready routes on its health port and turns unready when every slot is held by a
// call older than MT_WORKER_STUCK_MS.
const GRACE_MS = 5000;
/** The drain of that grace: tool calls in flight may finish this long (shutdownPlan). */
const DRAIN_MS = GRACE_MS - Math.min(5000, Math.floor(GRACE_MS / 3));
const RUNS = 8;
const env = {
  MT_WORKER_CONCURRENCY: String(RUNS),
  MT_SHUTDOWN_GRACE_MS: String(GRACE_MS),
  MT_SHUTDOWN_UNREADY_MS: '1000',
  MT_WORKER_HEALTH_PORT: '0',
  MT_WORKER_STUCK_MS: '1500',
};
const isTicket = (r: { method: string; url: string }) => r.method === 'POST' && r.url === '/tickets';
let stack: RunsStack;
// While frozen, a ticket POST is accepted and never answered (held until its client goes away).
let frozen = true;

beforeAll(async () => {
  // The first server executes no run: the process under test holds them all.
  stack = await startRunsStack({ servers: 1, workers: 0, env, serveArgs: ['--no-worker'] });
  stack.upstream.setHandler(async (request: UpstreamRequest, res, req: IncomingMessage) => {
    if (isTicket(request) && frozen) {
      await new Promise((resolve) => req.socket.once('close', resolve));
      return;
    }
    return defaultUpstreamAnswer(request, res);
  });
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

interface Probe {
  at: number;
  /** 0: no answer (refused, reset). */
  status: number;
  reason?: string;
  /** fastify's own 503 to a request that reaches it once it is closing (`return503OnClosing`): unready too. */
  closing?: true;
}

async function probe(url: string): Promise<Probe> {
  const at = performance.now();
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
    const body = (await res.json().catch(() => ({}))) as { reason?: string; error?: string };
    const closing = res.status === 503 && body.reason === undefined && body.error === 'Service Unavailable';
    return {
      at,
      status: res.status,
      ...(body.reason === undefined ? {} : { reason: body.reason }),
      ...(closing ? { closing: true as const } : {}),
    };
  } catch {
    return { at, status: 0 };
  }
}

/** SIGTERMs the process, polls `healthUrl` every 50 ms until it exits; resolves with its exit code, time and probes. */
async function terminate(
  proc: WorkerProcess,
  healthUrl: string,
  limitMs: number,
  during?: () => Promise<void>,
): Promise<{ code: number | null; ms: number; probes: Probe[] }> {
  const { child } = proc;
  let code: number | null | undefined;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (c) => {
      code = c;
      resolve();
    }),
  );
  const begin = performance.now();
  child.kill('SIGTERM');
  const alongside = during?.();
  const probes: Probe[] = [];
  let gone = false;
  void exit.then(() => {
    gone = true;
  });
  while (!gone && performance.now() - begin < limitMs) {
    const p = await probe(healthUrl);
    if (!gone) probes.push(p);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const ms = performance.now() - begin;
  await alongside;
  if (!gone) {
    child.kill('SIGKILL');
    await exit;
    throw new Error(
      `still running ${Math.round(ms)} ms after SIGTERM (grace ${GRACE_MS} ms)\n${proc.log().slice(-3000)}`,
    );
  }
  return { code: code ?? null, ms, probes };
}

/**
 * Readiness turned false ("shutting down") before anything else changed, and never came back. `already`: the reason
 * readiness gave before the signal (a worker whose slots are all stuck is unready already); a probe that raced the
 * signal may still say it, and only it, before "shutting down".
 */
function expectUnreadyFirst(probes: Probe[], already?: RegExp): void {
  const first = probes.findIndex((p) => p.status !== 200 && !(already?.test(p.reason ?? '') ?? false));
  expect(first, JSON.stringify(probes)).toBeGreaterThanOrEqual(0);
  expect(probes[first], JSON.stringify(probes)).toMatchObject({ status: 503, reason: 'shutting down' });
  expect(probes.slice(first).filter((p) => p.status === 200)).toEqual([]);
  // After it: "shutting down", no answer, or fastify's own 503 once the server closes (seen in CI: a probe that reached
  // the listener between close() and the listener's end).
  expect(probes.slice(first).filter((p) => p.status !== 0 && p.reason !== 'shutting down' && !p.closing)).toEqual([]);
}

/** Starts `RUNS` ticket runs and waits until each POST hangs at the upstream; resolves with the runs' ids. */
async function hangRuns(): Promise<{ ids: string[]; from: number }> {
  frozen = true;
  const from = stack.upstream.requests.length;
  const started = await Promise.all(
    Array.from({ length: RUNS }, () => stack.api.startRun('open-ticket', { message: 'My lamp arrived broken' })),
  );
  for (const s of started) expect(s.status, JSON.stringify(s.body)).toBe(201);
  const deadline = Date.now() + 30_000;
  while (stack.upstream.requests.slice(from).filter(isTicket).length < RUNS) {
    if (Date.now() > deadline) throw new Error('the ticket POSTs did not all reach the upstream in 30 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { ids: started.map((s) => (s.body as RunView).id), from };
}

/** Every run completes elsewhere; each call was sent again with its first attempt's Idempotency-Key, once. */
async function expectReplayedWithFirstKeys(ids: string[], from: number): Promise<void> {
  const runs = await Promise.all(ids.map((id) => stack.api.waitForEnd(id, 30_000)));
  for (const run of runs) {
    expect(run.status, JSON.stringify(run)).toBe('Completed');
    expect(run.result).toContain('T-9');
  }
  const tickets = stack.upstream.requests.slice(from).filter(isTicket);
  const first = tickets.slice(0, RUNS).map((r) => r.headers['idempotency-key']);
  const again = tickets.slice(RUNS).map((r) => r.headers['idempotency-key']);
  expect(new Set(first).size).toBe(RUNS);
  for (const key of first) expect(key).toMatch(/^mt-/);
  expect(again.toSorted()).toEqual(first.toSorted());
  // The journal holds one start and one result a call: the second attempt was a replay of the first.
  for (const id of ids) {
    const types = (await stack.api.events(id)).map((e) => e.type);
    expect(types.filter((t) => t === 'tool-call-started')).toHaveLength(1);
    expect(types.filter((t) => t === 'tool-result')).toHaveLength(1);
  }
}

function healthUrlOf(proc: WorkerProcess): string {
  const url = /health at (http:\/\/[\d.:]+)/.exec(proc.log())?.[1];
  if (url === undefined) throw new Error(`no health port in the worker's log:\n${proc.log()}`);
  return url;
}

describe('shutdown within its grace', { timeout: 60_000 }, () => {
  it('a health port setting that is not a port stops mt worker at start, with a clear code', async () => {
    const refused = await runMt(['worker'], {
      home: stack.home,
      env: { ...stack.env, MT_WORKER_HEALTH_PORT: '80x81' },
    });
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toContain('api:health:port-invalid');
    expect(refused.stderr).toContain('"80x81"');
  });

  it('mt worker: its health port turns unready when every slot is stuck; SIGTERM hands the runs back within the grace', async () => {
    const worker = await stack.addWorker();
    const health = healthUrlOf(worker);
    expect((await probe(`${health}/health/live`)).status).toBe(200);
    expect(await probe(`${health}/health`)).toMatchObject({ status: 200 });
    expect(await probe(`${health}/health/ready`)).toMatchObject({ status: 200 });
    expect((await probe(`${health}/other`)).status).toBe(404);

    const { ids, from } = await hangRuns();
    // Every slot is held by a call older than MT_WORKER_STUCK_MS: unready (the process itself still turns).
    let ready = await probe(`${health}/health`);
    for (let i = 0; i < 100 && ready.status === 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      ready = await probe(`${health}/health`);
    }
    expect(ready.status).toBe(503);
    expect(ready.reason).toMatch(/all 8 slots/);
    expect((await probe(`${health}/health/live`)).status).toBe(200);

    // Another worker takes the runs once they are handed back; the upstream answers from now on.
    const taker = await stack.addWorker();
    frozen = false;
    const stopped = await terminate(worker, `${health}/health`, GRACE_MS + 10_000);
    stack.workers.splice(stack.workers.indexOf(worker), 1);
    expect(stopped.code, worker.log().slice(-2000)).toBe(0);
    // The calls in flight were given the drain (the grace less its hand-back share), then handed back.
    expect(stopped.ms).toBeGreaterThan(DRAIN_MS - 100);
    expect(stopped.ms).toBeLessThan(GRACE_MS + 1000);
    expectUnreadyFirst(stopped.probes, /^all 8 slots/);
    await expectReplayedWithFirstKeys(ids, from);
    await taker.stop();
    stack.workers.splice(stack.workers.indexOf(taker), 1);
  });

  it('mt serve: readiness false first while the listener still answers, then the runs are handed back within the grace', async () => {
    const server = await startServe(stack.home, stack.env);
    stack.servers.push(server);
    const { ids, from } = await hangRuns();
    const taker = await stack.addWorker();
    frozen = false;
    // A client's request sent during the unready window is answered, not refused.
    let during: { status: number } | undefined;
    const stopped = await terminate(server, `${server.url}/health`, GRACE_MS + 10_000, async () => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      during = await api(server.url, stack.adminKey).request('GET', `/v1/runs/${ids[0]}`);
    });
    stack.servers.splice(stack.servers.indexOf(server), 1);
    expect(stopped.code, server.log().slice(-2000)).toBe(0);
    // The calls in flight were given the drain (the grace less its hand-back share), then handed back.
    expect(stopped.ms).toBeGreaterThan(DRAIN_MS - 100);
    expect(stopped.ms).toBeLessThan(GRACE_MS + 1000);
    expectUnreadyFirst(stopped.probes);
    expect(during?.status).toBe(200);
    // The listener answered (503) during the unready window before it closed to new connections.
    const answered = stopped.probes.filter((p) => p.status === 503);
    const refused = stopped.probes.findIndex((p) => p.status === 0);
    expect(answered.length).toBeGreaterThan(0);
    if (refused >= 0) expect(stopped.probes.slice(refused).filter((p) => p.status !== 0)).toEqual([]);
    await expectReplayedWithFirstKeys(ids, from);
    await taker.stop();
    stack.workers.splice(stack.workers.indexOf(taker), 1);
  });
});
