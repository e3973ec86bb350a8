import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpenAI } from '@ai-sdk/openai';
import { type ModelResolver, RUN_QUEUE, type RunEvent } from '@maitento/engine';
import { createFakeOpenAI, type FakeModelRequest, type FakeModelServer } from '@maitento/testkit';
import { openWakeups } from '@maitento/store';
import { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor, type World, ordersWorld, type TestUpstream } from './helpers.js';

let world: World;
let upstream: TestUpstream;
// Requests the upstream holds until the test lets them go, by order id.
const gates = new Map<string, Promise<void>>();

beforeAll(async () => {
  ({ world, upstream } = await ordersWorld(
    (req) => {
      const gate = [...gates.entries()].find(([id]) => req.url.includes(id));
      return { body: { order: req.url, refunded: true }, wait: gate?.[1] };
    },
    { repo: { model: 'openai:fake', refundApproval: false } },
  ));
});
afterAll(async () => {
  await world?.close();
});

function gate(orderId: string): () => void {
  let open = () => {};
  gates.set(
    orderId,
    new Promise<void>((resolve) => {
      open = resolve;
    }),
  );
  return open;
}

/** A model resolver that sends every `openai:*` agent to `fake`. */
function fakeModels(fake: { url: string }): ModelResolver {
  return () => ({ model: createOpenAI({ baseURL: fake.url, apiKey: 'k' }).chat('fake'), scripted: false });
}

/** A fake model that refunds once, then answers with the order it refunded (read from the task). */
function refundOnce(request: FakeModelRequest) {
  const task = request.conversation.userTexts[0] ?? '';
  if (request.conversation.toolResults.length === 0) {
    return { toolCalls: [{ name: 'refund-order', arguments: { request: { amount: 5, reason: 'late' } } }] };
  }
  return { text: `refunded: ${task}` };
}

function types(events: RunEvent[]) {
  return events.map((e) => e.type);
}

async function waitUntil(check: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('cancelling a Running run', () => {
  it('aborts its in-flight model call and stores run-cancelled as its last event; duplicate jobs meanwhile start nothing', async () => {
    let requests = 0;
    let aborted = 0;
    const model = createServer((req, res) => {
      requests++;
      req.resume();
      // Never answers: only the client's abort ends this request.
      res.on('close', () => {
        if (!res.writableFinished) aborted++;
      });
    });
    await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`;
    const engine = await world.engine({ models: fakeModels({ url }) });
    try {
      const started = await engine.startRun(world.ns, 'refund', { inputs: { message: 'x', orderId: 'C-1' } });
      await waitUntil(() => requests === 1);
      // Jobs for a run whose job is active (a cancel, an answer send them) wait: pg-boss admits one active job a run.
      const boss = new PgBoss({
        connectionString: world.db.connectionString!,
        max: 1,
        schedule: false,
        supervise: false,
      });
      await boss.start();
      await boss.send(RUN_QUEUE, { runId: started.id }, { singletonKey: started.id });
      await boss.send(RUN_QUEUE, { runId: started.id }, { singletonKey: started.id });
      await new Promise((r) => setTimeout(r, 1500));
      await boss.stop({ graceful: false, close: true });
      expect(requests).toBe(1);
      const begin = Date.now();
      const asked = await engine.cancelRun(world.ns, started.id);
      // Without wake-ups the worker reads the flag every 2 s, so it may already have stopped the run when the answer is read.
      expect(['Running', 'Cancelled']).toContain(asked.status);
      const run = await waitFor(engine, world.ns, started.id, undefined, 5000);
      expect(run.status).toBe('Cancelled');
      // The fallback poll reads the flag every 2 s (with wake-ups the cancel is seen at once: the test below).
      expect(Date.now() - begin).toBeLessThan(4500);
      await waitUntil(() => aborted === 1);
      await new Promise((r) => setTimeout(r, 600));
      expect(types(await engine.listEvents(world.ns, run.id))).toEqual(['run-started', 'run-cancelled']);
      expect(requests).toBe(1);
      await expect(engine.cancelRun(world.ns, run.id)).rejects.toMatchObject({ code: 'api:runs:already-ended' });
    } finally {
      await engine.close();
      model.closeAllConnections();
      model.close();
    }
  });

  it('learns of a cancel through its wake-up, not a poll: the run is Cancelled within 500 ms', async () => {
    const fake = await createFakeOpenAI({ respond: refundOnce });
    const wakeups = await openWakeups(world.db);
    const engine = await world.engine({ models: fakeModels(fake), wakeups });
    const release = gate('C-3');
    try {
      const started = await engine.startRun(world.ns, 'refund', { inputs: { message: 'x', orderId: 'C-3' } });
      await waitUntil(() => upstream.seen.some((s) => s.url.includes('C-3')));
      const begin = Date.now();
      await engine.cancelRun(world.ns, started.id);
      const run = await waitFor(engine, world.ns, started.id, undefined, 5000);
      expect(run.status).toBe('Cancelled');
      // The fallback poll (every 2 s) is off while wake-ups listen: only the wake-up can have been this fast.
      expect(Date.now() - begin).toBeLessThan(500);
    } finally {
      release();
      await engine.close();
      await wakeups.close();
      await fake.close();
    }
  });

  it('aborts its in-flight tool call: no tool result, run-cancelled last, the model not asked again', async () => {
    const fake = await createFakeOpenAI({ respond: refundOnce });
    const engine = await world.engine({ models: fakeModels(fake) });
    gate('C-2');
    try {
      const abortedBefore = upstream.aborted;
      const started = await engine.startRun(world.ns, 'refund', { inputs: { message: 'x', orderId: 'C-2' } });
      await waitUntil(() => upstream.seen.some((s) => s.url.includes('C-2')));
      await engine.cancelRun(world.ns, started.id);
      const run = await waitFor(engine, world.ns, started.id, undefined, 5000);
      expect(run.status).toBe('Cancelled');
      await waitUntil(() => upstream.aborted === abortedBefore + 1);
      await new Promise((r) => setTimeout(r, 600));
      expect(types(await engine.listEvents(world.ns, run.id))).toEqual([
        'run-started',
        'model-response',
        'tool-call-started',
        'run-cancelled',
      ]);
      expect(fake.requests).toHaveLength(1);
      expect(upstream.seen.filter((s) => s.url.includes('C-2'))).toHaveLength(1);
    } finally {
      await engine.close();
      await fake.close();
    }
  });
});

describe('many runs at once', () => {
  it('two live workers racing on 40 runs (each queued three times): every run completes, once, on one worker', async () => {
    const fakes: FakeModelServer[] = [
      await createFakeOpenAI({ respond: refundOnce }),
      await createFakeOpenAI({ respond: refundOnce }),
    ];
    const [a, b] = [
      await world.engine({ models: fakeModels(fakes[0]!) }),
      await world.engine({ models: fakeModels(fakes[1]!) }),
    ];
    // Duplicate jobs for every run, sent straight to the queue, so both workers pick up the same runs.
    const boss = new PgBoss({
      connectionString: world.db.connectionString!,
      max: 2,
      schedule: false,
      supervise: false,
    });
    await boss.start();
    upstream.delayMs = 10;
    try {
      const ids = await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          const engine = i % 2 === 0 ? a : b;
          const run = await engine.startRun(world.ns, 'refund', { inputs: { message: `m${i}`, orderId: `W-${i}-` } });
          await boss.send(RUN_QUEUE, { runId: run.id }, { singletonKey: run.id });
          await boss.send(RUN_QUEUE, { runId: run.id }, { singletonKey: run.id });
          return run.id;
        }),
      );
      const runs = await Promise.all(ids.map((id) => waitFor(a, world.ns, id, undefined, 30_000)));
      for (const [i, run] of runs.entries()) {
        expect(run.status).toBe('Completed');
        expect(run.result).toContain(`Refund order W-${i}-`);
      }
      const keys: string[] = [];
      for (const [i, id] of ids.entries()) {
        const posts = upstream.seen.filter((s) => s.url.includes(`/W-${i}-/`));
        expect(posts).toHaveLength(1);
        keys.push(String(posts[0]!.headers['idempotency-key']));
        const events = await a.listEvents(world.ns, id);
        expect(events.map((e) => e.seq)).toEqual(events.map((_, n) => n + 1));
        expect(types(events)).toEqual([
          'run-started',
          'model-response',
          'tool-call-started',
          'tool-result',
          'model-response',
          'run-completed',
        ]);
        const started = events.filter((e) => e.type === 'tool-call-started').map((e) => e.data.toolCallId);
        expect(new Set(started).size).toBe(started.length);
        // Both model turns of a run were asked of one worker's model, once each.
        const asked = fakes.map((f) => f.requests.filter((r) => r.conversation.userTexts[0]?.includes(`W-${i}-:`)));
        expect(asked.map((r) => r.length).sort()).toEqual([0, 2]);
      }
      expect(new Set(keys).size).toBe(40);
      expect(fakes.every((f) => f.requests.length > 0)).toBe(true);
    } finally {
      upstream.delayMs = 0;
      await boss.stop({ graceful: false, close: true });
      await a.close();
      await b.close();
      for (const f of fakes) await f.close();
    }
  }, 60_000);

  it('a run waiting on a slow model and one on a slow upstream hold up none of 5 fast runs', async () => {
    let releaseModel = () => {};
    const slowModel = new Promise<void>((resolve) => {
      releaseModel = resolve;
    });
    const fake = await createFakeOpenAI({
      respond: async (request) => {
        if (request.conversation.userTexts[0]?.includes('S-model') && request.conversation.toolResults.length === 0)
          await slowModel;
        return refundOnce(request);
      },
    });
    const engine = await world.engine({ models: fakeModels(fake), worker: { concurrency: 4 } });
    const releaseUpstream = gate('S-upstream');
    try {
      const slow = [
        await engine.startRun(world.ns, 'refund', { inputs: { message: 'x', orderId: 'S-model' } }),
        await engine.startRun(world.ns, 'refund', { inputs: { message: 'x', orderId: 'S-upstream' } }),
      ];
      await waitUntil(() => upstream.seen.some((s) => s.url.includes('S-upstream')));
      const fast = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          engine.startRun(world.ns, 'refund', { inputs: { message: 'x', orderId: `F-${i}` } }),
        ),
      );
      const done = await Promise.all(fast.map((run) => waitFor(engine, world.ns, run.id, undefined, 10_000)));
      expect(done.map((run) => run.status)).toEqual(Array(5).fill('Completed'));
      for (const run of slow) expect((await engine.getRun(world.ns, run.id)).status).toBe('Running');
      releaseModel();
      releaseUpstream();
      const ended = await Promise.all(slow.map((run) => waitFor(engine, world.ns, run.id, undefined, 10_000)));
      expect(ended.map((run) => run.status)).toEqual(['Completed', 'Completed']);
    } finally {
      releaseModel();
      releaseUpstream();
      await engine.close();
      await fake.close();
    }
  }, 30_000);
});

describe('how many runs a worker takes at once', () => {
  const usage = {
    inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 0, text: 0, reasoning: 0 },
  };

  function blockLoop(ms: number): void {
    const end = performance.now() + ms;
    while (performance.now() < end) {
      // Blocks the event loop, as CPU-bound work does.
    }
  }

  /** A model that answers after 400 ms (the run waits outside the engine); `track` counts the runs waiting on it. */
  function slowModel(track: { inFlight: number; most: number }): ModelResolver {
    const model = {
      specificationVersion: 'v4' as const,
      provider: 'test',
      modelId: 'slow',
      supportedUrls: {},
      async doGenerate() {
        await new Promise((r) => setTimeout(r, 400));
        track.inFlight--;
        return {
          content: [{ type: 'text' as const, text: 'done' }],
          finishReason: { unified: 'stop' as const, raw: undefined },
          usage,
          warnings: [],
        };
      },
      async doStream(): Promise<never> {
        throw new Error('not streamed');
      },
    };
    return () => {
      track.inFlight++;
      track.most = Math.max(track.most, track.inFlight);
      return { model, scripted: false };
    };
  }

  /** Queues four runs, then starts a worker with four slots; resolves with the most runs waiting on the model at once. */
  async function runFour(): Promise<number> {
    const track = { inFlight: 0, most: 0 };
    const api = await world.engine({ worker: false });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push((await api.startRun(world.ns, 'refund', { inputs: { message: 'x', orderId: `L-${i}` } })).id);
    }
    const engine = await world.engine({ models: slowModel(track), worker: { concurrency: 4 } });
    try {
      for (const id of ids) expect((await waitFor(engine, world.ns, id, undefined, 10_000)).status).toBe('Completed');
      return track.most;
    } finally {
      await engine.close();
      await api.close();
    }
  }

  it('fills its slots while the runs in flight wait (on a model): one slow model holds up no other run', async () => {
    expect(await runFour()).toBe(4);
  });

  it('fills its slots with runs that wait even while other work keeps its event loop busy (an API under load)', async () => {
    // 17 ms of CPU every 20 ms: the loop is ~85% busy, over the limit's threshold, for the whole test.
    const load = setInterval(() => blockLoop(17), 20);
    try {
      expect(await runFour()).toBe(4);
    } finally {
      clearInterval(load);
    }
  });
});
