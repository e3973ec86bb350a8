import { ordersRepo } from '@maitento/testkit';
import { setVersionEnabled } from '@maitento/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor, type World, ordersWorld, type TestUpstream } from './helpers.js';

let world: World;
let upstream: TestUpstream;

beforeAll(async () => {
  ({ world, upstream } = await ordersWorld((req) => ({ body: { order: req.url, status: 'shipped' } })));
});
afterAll(async () => {
  await world?.close();
});

function types(events: { type: string }[]) {
  return events.map((e) => e.type);
}

describe('runs', () => {
  it('completes a tool call and an answer, storing every step in order', async () => {
    world.script('support', [
      {
        toolCalls: [
          { name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'A-1001', 'query.verbose': null } } },
        ],
      },
      { text: 'Your order A-1001 has shipped.' },
    ]);
    const engine = await world.engine();
    const started = await engine.startRun(world.ns, 'support', { inputs: { message: 'Where is my order?' } });
    expect(started.status).toBe('Running');
    const run = await waitFor(engine, world.ns, started.id);
    expect(run.status).toBe('Completed');
    expect(run.result).toBe('Your order A-1001 has shipped.');
    expect(run.versions.map((v) => `${v.kind}:${v.name}`).sort()).toEqual([
      'agent:support-agent',
      'connector:orders-get',
      'connector:orders-refund',
      'interaction:support',
      'tool:get-order',
      'tool:refund-order',
    ]);
    const events = await engine.listEvents(world.ns, run.id);
    expect(types(events)).toEqual([
      'run-started',
      'model-response',
      'tool-call-started',
      'tool-result',
      'model-response',
      'run-completed',
    ]);
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    const response = events[1]!.data;
    expect(response.model).toBe('scripted:support');
    expect(response.scripted).toBe(true);
    const result = events[3]!.data;
    expect(result.ok).toBe(true);
    expect(String(result.result)).toContain('/orders/A-1001');
    expect(JSON.stringify(events)).not.toContain('sk-orders-123');
    const call = upstream.seen.find((s) => s.url.startsWith('/orders/A-1001'))!;
    expect(call.headers['x-api-key']).toBe('sk-orders-123');
  });

  it('makes and stores every tool call of one model turn', async () => {
    world.script('support', [
      {
        toolCalls: [
          { name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'B-1', 'query.verbose': null } } },
          { name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'B-2', 'query.verbose': null } } },
          { name: 'no-such-tool', arguments: {} },
        ],
      },
      { text: 'Both found.' },
    ]);
    const engine = world.engines[0]!;
    const run = await waitFor(
      engine,
      world.ns,
      (await engine.startRun(world.ns, 'support', { inputs: { message: 'hi' } })).id,
    );
    expect(run.status).toBe('Completed');
    const events = await engine.listEvents(world.ns, run.id);
    const results = events.filter((e) => e.type === 'tool-result').map((e) => e.data);
    expect(results.map((r) => r.ok)).toEqual([true, true, false]);
    expect(results[2]!.code).toBe('api:runs:unknown-tool');
    expect(upstream.seen.filter((s) => s.url.startsWith('/orders/B-')).map((s) => s.url)).toEqual([
      '/orders/B-1',
      '/orders/B-2',
    ]);
  });

  it('refuses missing, malformed and unknown inputs with their codes', async () => {
    const engine = world.engines[0]!;
    await expect(engine.startRun(world.ns, 'support', { inputs: {} })).rejects.toMatchObject({
      code: 'api:interactions:input-required',
      status: 422,
    });
    await expect(engine.startRun(world.ns, 'support', { inputs: { message: '' } })).rejects.toMatchObject({
      code: 'api:interactions:input-required',
    });
    await expect(
      engine.startRun(world.ns, 'refund', { inputs: { message: 'x', orderId: 'A-1', shopKey: 'second-shop-api-key' } }),
    ).rejects.toMatchObject({
      code: 'api:interactions:input-invalid',
      message:
        "requires valid GUID for secret ID shopKey - but value is: second-shop-api-key; pass the secret's id, not its name (`mt secret-list` shows them)",
    });
    await expect(
      engine.startRun(world.ns, 'refund', { inputs: { message: 'x', orderId: 'A-1', verbose: 'maybe' } }),
    ).rejects.toMatchObject({ code: 'api:interactions:input-invalid' });
    await expect(engine.startRun(world.ns, 'support', { inputs: { message: 'x', mesage: 'y' } })).rejects.toMatchObject(
      {
        code: 'api:interactions:input-unknown',
        message: expect.stringContaining('did you mean message?'),
      },
    );
    await expect(engine.startRun(world.ns, 'nope', {})).rejects.toMatchObject({
      code: 'api:interactions:not-found',
      status: 404,
    });
  });

  it('keeps calling the pinned versions after a deploy, and a disabled pinned tool gives a tool error, not a failure', async () => {
    world.script('support', [
      {
        toolCalls: [
          { name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'P-1', 'query.verbose': null } } },
        ],
      },
      {
        toolCalls: [
          { name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'P-2', 'query.verbose': null } } },
        ],
      },
      { text: 'done' },
    ]);
    const engine = world.engines[0]!;
    upstream.delayMs = 400;
    const started = await engine.startRun(world.ns, 'support', { inputs: { message: 'pin' } });
    const pinnedTool = started.versions.find((v) => v.kind === 'connector' && v.name === 'orders-get')!;
    // A new connector version pointing elsewhere: the run must keep its own.
    await world.deployFiles(ordersRepo({ origin: `${upstream.url}/moved` }));
    await waitFor(engine, world.ns, started.id, (r) => r.status !== 'Running', 10_000).catch(() => undefined);
    upstream.delayMs = 0;
    const run = await engine.getRun(world.ns, started.id);
    expect(run.status).toBe('Completed');
    expect(upstream.seen.filter((s) => s.url.includes('P-')).map((s) => s.url)).toEqual(['/orders/P-1', '/orders/P-2']);
    expect(pinnedTool.version).toBe(1);

    // Disable the pinned tool version of a new run: its next call is refused as a tool result. The first turn's
    // call is slow, so the disable is stored while it is in flight and before the second turn's call, whatever the
    // run's pace (the first call may be made or refused; the second is refused).
    world.script('support', [
      {
        toolCalls: [
          { name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'D-0', 'query.verbose': null } } },
        ],
      },
      {
        toolCalls: [
          { name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'D-1', 'query.verbose': null } } },
        ],
      },
      { text: 'could not' },
    ]);
    upstream.delayMs = 400;
    const second = await engine.startRun(world.ns, 'support', { inputs: { message: 'disabled' } });
    const tool = second.versions.find((v) => v.kind === 'tool' && v.name === 'get-order')!;
    await setVersionEnabled(world.db, world.ns, 'tool', 'get-order', tool.version, false);
    const done = await waitFor(engine, world.ns, second.id);
    upstream.delayMs = 0;
    await setVersionEnabled(world.db, world.ns, 'tool', 'get-order', tool.version, true);
    expect(done.status).toBe('Completed');
    const results = (await engine.listEvents(world.ns, second.id)).filter((e) => e.type === 'tool-result');
    expect(results).toHaveLength(2);
    expect(results[1]!.data.code).toBe('api:extops:version-disabled');
    expect(upstream.seen.some((s) => s.url.includes('D-1'))).toBe(false);
  });

  it('fails a run that takes too many model turns', async () => {
    world.script(
      'support',
      Array.from({ length: 25 }, () => ({ toolCalls: [{ name: 'no-such-tool', arguments: {} }] })),
    );
    const engine = await world.engine({ maxSteps: 3 });
    const run = await waitFor(
      engine,
      world.ns,
      (await engine.startRun(world.ns, 'support', { inputs: { message: 'loop' } })).id,
    );
    expect(run.status).toBe('Failed');
    expect(run.error?.code).toBe('api:runs:too-many-steps');
    await engine.close();
  });
});
