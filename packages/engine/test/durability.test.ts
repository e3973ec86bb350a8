import { ordersRepo } from '@maitento/testkit';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpenAI } from '@ai-sdk/openai';
import { modelsFromEnvironment, RUN_QUEUE } from '@maitento/engine';
import { createApiKey, deleteApiKey } from '@maitento/store';
import { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPglite, makeWorld, waitFor, type World, ordersWorld, type TestUpstream } from './helpers.js';

let world: World;
let upstream: TestUpstream;
const get = (id: string) => ({
  toolCalls: [{ name: 'get-order', arguments: { additionalInputs: { 'path.orderId': id, 'query.verbose': null } } }],
});

beforeAll(async () => {
  ({ world, upstream } = await ordersWorld((req) => ({ body: { order: req.url } })));
});
afterAll(async () => {
  await world?.close();
});

describe('durability', () => {
  it('lets a tool call in flight finish when its worker stops, stores its result, and hands the run on: one POST', async () => {
    world.script('support', [
      { toolCalls: [{ name: 'refund-order', arguments: { request: { amount: 1, reason: 'r' } } }] },
      { text: 'done' },
    ]);
    await world.deployFiles(ordersRepo({ origin: upstream.url, refundApproval: false }));
    const first = await world.engine();
    upstream.delayMs = 1500;
    const started = await first.startRun(world.ns, 'refund', { inputs: { message: 'x', orderId: 'K-1' } });
    const deadline = Date.now() + 5000;
    while (!upstream.seen.some((s) => s.url.includes('K-1')) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    await first.close();
    // The stop waited for the POST: its result is stored before the run was handed on.
    const stored = (
      await world.db.query<{ type: string }>('SELECT type FROM mt_run_events WHERE run_id = $1', [started.id])
    ).rows.map((row) => row.type);
    expect(stored).toContain('tool-result');
    upstream.delayMs = 0;
    const second = await world.engine();
    const run = await waitFor(second, world.ns, started.id);
    expect(run.status).toBe('Completed');
    expect(upstream.seen.filter((s) => s.url.includes('K-1'))).toHaveLength(1);
    const types = (await second.listEvents(world.ns, run.id)).map((e) => e.type);
    expect(types.filter((t) => t === 'tool-call-started')).toHaveLength(1);
    expect(types.filter((t) => t === 'tool-result')).toHaveLength(1);
    await second.close();
    await world.deployFiles(ordersRepo({ origin: upstream.url }));
  });

  it('does not retry a started call after the stop when the key that started the run was deleted meanwhile', async () => {
    world.script('support', [
      { toolCalls: [{ name: 'refund-order', arguments: { request: { amount: 2, reason: 'r' } } }] },
      { text: 'done' },
    ]);
    await world.deployFiles(ordersRepo({ origin: upstream.url, refundApproval: false }));
    const key = await createApiKey(world.db, world.ns, { role: 'user', name: 'leaving' });
    // A stop past its drain deadline cuts the call off: the run is handed on with the call started and no result.
    const first = await world.engine({ drainMs: 100 });
    upstream.delayMs = 1500;
    const started = await first.startRun(
      world.ns,
      'refund',
      { inputs: { message: 'x', orderId: 'K-2' } },
      { keyId: key.id },
    );
    const deadline = Date.now() + 5000;
    while (!upstream.seen.some((s) => s.url.includes('K-2')) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    await first.close();
    upstream.delayMs = 0;
    await deleteApiKey(world.db, world.ns, key.id);
    const second = await world.engine();
    const run = await waitFor(second, world.ns, started.id);
    expect(run.status).toBe('Completed');
    expect(upstream.seen.filter((s) => s.url.includes('K-2'))).toHaveLength(1);
    const result = (await second.listEvents(world.ns, run.id)).find((e) => e.type === 'tool-result')!;
    expect(result.data.code).toBe('api:calls:key-deleted');
    await second.close();
    await world.deployFiles(ordersRepo({ origin: upstream.url }));
  });

  it('heartbeats a run it holds longer than the 10 s heartbeat: pg-boss does not retry it, one POST', async () => {
    world.script('support', [
      { toolCalls: [{ name: 'refund-order', arguments: { request: { amount: 1, reason: 'r' } } }] },
      { text: 'done' },
    ]);
    await world.deployFiles(ordersRepo({ origin: upstream.url, refundApproval: false }));
    const engine = await world.engine();
    upstream.delayMs = 14_000;
    try {
      const started = await engine.startRun(world.ns, 'refund', { inputs: { message: 'x', orderId: 'H-1' } });
      const run = await waitFor(engine, world.ns, started.id, undefined, 40_000);
      expect(run.status).toBe('Completed');
      expect(upstream.seen.filter((s) => s.url.includes('H-1'))).toHaveLength(1);
      const { rows } = await world.db.query<{ retry_count: number }>(
        'SELECT retry_count FROM pgboss.job WHERE singleton_key = $1',
        [started.id],
      );
      expect(rows).toEqual([{ retry_count: 0 }]);
    } finally {
      upstream.delayMs = 0;
      await engine.close();
      await world.deployFiles(ordersRepo({ origin: upstream.url }));
    }
  }, 60_000);

  it('fails a run with a code when the model is down, answers 500 or garbage, while other runs complete', async () => {
    const model = createServer((req, res) => {
      const mode = req.url?.includes('/garbage') ? 'garbage' : 'error';
      if (mode === 'garbage') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"this is": not json');
      } else {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"boom"}}');
      }
    });
    await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
    const port = (model.address() as AddressInfo).port;
    const scripted = modelsFromEnvironment({ scriptsDir: world.scriptsDir });
    const engine = await world.engine({
      models: (spec) => {
        if (spec === 'openai:down')
          return { model: createOpenAI({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'k' }).chat('m'), scripted: false };
        if (spec === 'openai:fail')
          return {
            model: createOpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'k' }).chat('m'),
            scripted: false,
          };
        if (spec === 'openai:garbage')
          return {
            model: createOpenAI({ baseURL: `http://127.0.0.1:${port}/garbage`, apiKey: 'k' }).chat('m'),
            scripted: false,
          };
        return scripted(spec);
      },
    });
    for (const [spec, code] of [
      ['openai:down', 'api:models:unreachable'],
      ['openai:fail', 'api:models:error'],
      ['openai:garbage', 'api:models:invalid-response'],
    ] as const) {
      await world.deployFiles(ordersRepo({ origin: upstream.url, model: spec }));
      const failing = await engine.startRun(world.ns, 'support', { inputs: { message: 'x' } });
      await world.deployFiles(ordersRepo({ origin: upstream.url }));
      world.script('support', [{ text: 'fine' }]);
      const fine = await engine.startRun(world.ns, 'support', { inputs: { message: 'y' } });
      const [a, b] = await Promise.all([waitFor(engine, world.ns, failing.id), waitFor(engine, world.ns, fine.id)]);
      expect(a.status).toBe('Failed');
      expect(a.error?.code).toBe(code);
      expect(b.status).toBe('Completed');
    }
    model.close();
  });

  it('adopts the Running runs of an earlier version: the first engine to create the queue sends them jobs and deletes the old queue', async () => {
    const earlier = await makeWorld();
    const boss = new PgBoss({
      connectionString: earlier.db.connectionString!,
      max: 1,
      schedule: false,
      supervise: false,
    });
    try {
      earlier.script('support', [{ text: 'adopted' }]);
      await earlier.secret('orders-key', 'k');
      await earlier.deployFiles(ordersRepo({ origin: upstream.url }));
      const api = await earlier.engine({ worker: false });
      const started = await api.startRun(earlier.ns, 'support', { inputs: { message: 'x' } });
      await api.close();
      // As an earlier version left it: the run Running, its job in the old queue, no queue of this version.
      await boss.start();
      await boss.deleteQueue(RUN_QUEUE);
      await boss.createQueue('mt-runs');
      await boss.send('mt-runs', { runId: started.id });
      const engine = await earlier.engine();
      const run = await waitFor(engine, earlier.ns, started.id);
      expect(run).toMatchObject({ status: 'Completed', result: 'adopted' });
      expect(await boss.getQueue('mt-runs')).toBeNull();
    } finally {
      await boss.stop({ graceful: false, close: true }).catch(() => {});
      await earlier.close();
    }
  });

  it('runs on PGlite, queue and its maintenance included; the engine starts and closes in about a second', async () => {
    const pglite = await makeWorld(await freshPglite());
    try {
      pglite.script('support', [get('G-1'), { text: 'on pglite' }]);
      await pglite.secret('orders-key', 'k');
      await pglite.deployFiles(ordersRepo({ origin: upstream.url }));
      let begin = performance.now();
      const engine = await pglite.engine();
      const startMs = performance.now() - begin;
      const run = await waitFor(
        engine,
        pglite.ns,
        (await engine.startRun(pglite.ns, 'support', { inputs: { message: 'x' } })).id,
      );
      expect(run.status).toBe('Completed');
      expect(run.result).toBe('on pglite');
      begin = performance.now();
      await engine.close();
      const closeMs = performance.now() - begin;
      // A second engine on the same database finds the queue made: its start is the short one.
      begin = performance.now();
      const again = await pglite.engine();
      const restartMs = performance.now() - begin;
      begin = performance.now();
      await again.close();
      const recloseMs = performance.now() - begin;
      console.log(JSON.stringify({ startMs, closeMs, restartMs, recloseMs }));
      expect(closeMs).toBeLessThan(1500);
      expect(recloseMs).toBeLessThan(1500);
      expect(restartMs).toBeLessThan(3000);
    } finally {
      await pglite.close();
    }
  }, 60_000);
});
