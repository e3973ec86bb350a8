import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpenAI } from '@ai-sdk/openai';
import { modelsFromEnvironment } from '@maitento/engine';
import { claimRun, createApiKey, deleteApiKey } from '@maitento/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPglite, makeWorld, ordersRepo, startUpstream, waitFor, type World } from './helpers.js';

let world: World;
let upstream: Awaited<ReturnType<typeof startUpstream>>;
const get = (id: string) => ({
  toolCalls: [{ name: 'get-order', arguments: { additionalInputs: { 'path.orderId': id, 'query.verbose': null } } }],
});

beforeAll(async () => {
  upstream = await startUpstream((req) => ({ body: { order: req.url } }));
  world = await makeWorld();
  await world.secret('orders-key', 'sk-orders-123');
  await world.deployFiles(ordersRepo(upstream.url));
});
afterAll(async () => {
  await world?.close();
  await upstream?.close();
});

describe('durability', () => {
  it('resumes a run whose worker stopped mid tool call, retrying the call with the same Idempotency-Key', async () => {
    world.script('support', [
      { toolCalls: [{ name: 'refund-order', arguments: { request: { amount: 1, reason: 'r' } } }] },
      { text: 'done' },
    ]);
    await world.deployFiles(ordersRepo(upstream.url, { refundApproval: false }));
    const first = await world.engine();
    upstream.delayMs = 1500;
    const started = await first.startRun(world.ns, 'refund', { inputs: { message: 'x', orderId: 'K-1' } });
    const deadline = Date.now() + 5000;
    while (!upstream.seen.some((s) => s.url.includes('K-1')) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    await first.close();
    upstream.delayMs = 0;
    const second = await world.engine();
    const run = await waitFor(second, world.ns, started.id);
    expect(run.status).toBe('Completed');
    const posts = upstream.seen.filter((s) => s.url.includes('K-1'));
    expect(posts.length).toBe(2);
    expect(posts[0]!.headers['idempotency-key']).toBeTruthy();
    expect(posts[1]!.headers['idempotency-key']).toBe(posts[0]!.headers['idempotency-key']);
    const types = (await second.listEvents(world.ns, run.id)).map((e) => e.type);
    expect(types.filter((t) => t === 'tool-call-started')).toHaveLength(1);
    expect(types.filter((t) => t === 'tool-result')).toHaveLength(1);
    await second.close();
    await world.deployFiles(ordersRepo(upstream.url));
  });

  it('does not retry a started call after the stop when the key that started the run was deleted meanwhile', async () => {
    world.script('support', [
      { toolCalls: [{ name: 'refund-order', arguments: { request: { amount: 2, reason: 'r' } } }] },
      { text: 'done' },
    ]);
    await world.deployFiles(ordersRepo(upstream.url, { refundApproval: false }));
    const key = await createApiKey(world.db, world.ns, { role: 'user', name: 'leaving' });
    const first = await world.engine();
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
    await world.deployFiles(ordersRepo(upstream.url));
  });

  it('lets one worker execute a run while another holds its lease, and takes it over once the lease runs out', async () => {
    world.script('support', [get('L-1'), { text: 'done' }]);
    const engine = await world.engine();
    // A dead worker's claim: nobody may run it until the lease runs out (2 s here), then the sweep re-queues it.
    const started = await world.db.transaction(async () =>
      engine.startRun(world.ns, 'support', { inputs: { message: 'x' } }),
    );
    await world.db.query(
      "UPDATE mt_runs SET lease_owner = 'dead', lease_until = now() + interval '2 seconds' WHERE id = $1",
      [started.id],
    );
    expect(await claimRun(world.db, started.id, 'someone-else', 30)).toBeUndefined();
    const run = await waitFor(engine, world.ns, started.id, undefined, 10_000);
    expect(run.status).toBe('Completed');
    expect(upstream.seen.filter((s) => s.url.includes('L-1'))).toHaveLength(1);
    // Closed, so that later tests' runs go to the engine with their own models.
    await engine.close();
  });

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
      await world.deployFiles(ordersRepo(upstream.url, { model: spec }));
      const failing = await engine.startRun(world.ns, 'support', { inputs: { message: 'x' } });
      await world.deployFiles(ordersRepo(upstream.url));
      world.script('support', [{ text: 'fine' }]);
      const fine = await engine.startRun(world.ns, 'support', { inputs: { message: 'y' } });
      const [a, b] = await Promise.all([waitFor(engine, world.ns, failing.id), waitFor(engine, world.ns, fine.id)]);
      expect(a.status).toBe('Failed');
      expect(a.error?.code).toBe(code);
      expect(b.status).toBe('Completed');
    }
    model.close();
  });

  it('runs on PGlite, queue and its maintenance included; the engine starts and closes in about a second', async () => {
    const pglite = await makeWorld(await freshPglite());
    try {
      pglite.script('support', [get('G-1'), { text: 'on pglite' }]);
      await pglite.secret('orders-key', 'k');
      await pglite.deployFiles(ordersRepo(upstream.url));
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
