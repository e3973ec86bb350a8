import { randomUUID } from 'node:crypto';
import { isPreparedRequest } from '@maitento/gateway';
import { engineErrors } from '@maitento/engine';
import {
  answerApprovalRecord,
  consumeApproval,
  createApiKey,
  deleteApiKey,
  getVersion,
  insertApproval,
} from '@maitento/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor, type World, ordersWorld, type TestUpstream } from './helpers.js';

// Models reuse tool call ids (`call_0` in every turn, even twice in one turn): an approval belongs to one call of
// one turn, the call's identity being (run, turn, index), never the model's id.
let world: World;
let upstream: TestUpstream;
const by = { keyId: 'k1', keyName: 'alice', role: 'user' as const };
const lookup = (order: string, id = 'call_0') => ({
  name: 'get-order',
  id,
  arguments: { additionalInputs: { 'path.orderId': order } },
});
const gets = () => upstream.seen.filter((s) => s.method === 'GET');

beforeAll(async () => {
  // get-order is a GET (no Idempotency-Key header) that needs a person's approval.
  ({ world, upstream } = await ordersWorld(() => ({ body: { status: 'shipped' } }), {
    files: (files) =>
      files.map((f) =>
        f.path.endsWith('get-order.mtr') ? { ...f, content: `${f.content}requiresApproval = true\n` } : f,
      ),
  }));
  await world.engine();
});
afterAll(async () => {
  await world?.close();
});

describe('a model that reuses one call id', () => {
  it('asks a person for every turn: one approval lets one call through, and after a rejection the redraft is asked again', async () => {
    world.script('support', [
      { toolCalls: [lookup('A-1')] },
      { toolCalls: [lookup('A-1')] },
      { toolCalls: [lookup('A-1')] },
      { text: 'Done.' },
    ]);
    const engine = world.engines[0]!;
    const run = await engine.startRun(world.ns, 'support', { inputs: { message: 'where is A-1?' } });
    const first = await waitFor(engine, world.ns, run.id);
    expect(first.status).toBe('PendingApproval');
    const before = gets().length;
    await engine.answerRunApproval(world.ns, run.id, first.pendingApproval!.id, { decision: 'approve', by });
    // The next turn's call has the same id and the same request: a person is asked again, and nothing more is sent.
    const second = await waitFor(
      engine,
      world.ns,
      run.id,
      (r) => r.status === 'PendingApproval' && r.pendingApproval!.id !== first.pendingApproval!.id,
    );
    expect(gets().length - before).toBe(1);
    await engine.answerRunApproval(world.ns, run.id, second.pendingApproval!.id, {
      decision: 'reject',
      reason: 'Not again',
      by,
    });
    const third = await waitFor(
      engine,
      world.ns,
      run.id,
      (r) => r.status === 'PendingApproval' && r.pendingApproval!.id !== second.pendingApproval!.id,
    );
    expect(third.pendingApproval!.status).toBe('Pending');
    expect(gets().length - before).toBe(1);
    await engine.answerRunApproval(world.ns, run.id, third.pendingApproval!.id, { decision: 'approve', by });
    expect((await waitFor(engine, world.ns, run.id)).status).toBe('Completed');
    expect(gets().length - before).toBe(2);
    const results = (await engine.listEvents(world.ns, run.id)).filter((e) => e.type === 'tool-result');
    expect(results.map((e) => e.data.code)).toEqual([null, 'api:approvals:rejected', null]);
  });

  it('keeps two calls with the same id in one turn apart: each has its own approval and is made once', async () => {
    world.script('support', [{ toolCalls: [lookup('B-1'), lookup('B-2')] }, { text: 'Both found.' }]);
    const engine = world.engines[0]!;
    const run = await engine.startRun(world.ns, 'support', { inputs: { message: 'B-1 and B-2?' } });
    const waiting = await waitFor(engine, world.ns, run.id);
    expect(waiting.status).toBe('PendingApproval');
    const requested = (await engine.listEvents(world.ns, run.id)).filter((e) => e.type === 'approval-requested');
    expect(requested.map((e) => e.data.index)).toEqual([0, 1]);
    const [one, two] = requested.map((e) => (e.data.approval as { id: string }).id);
    await engine.answerApproval(world.ns, one!, { decision: 'approve', by });
    const still = await waitFor(
      engine,
      world.ns,
      run.id,
      (r) => r.status === 'PendingApproval' && r.pendingApproval!.id === two,
    );
    expect(still.pendingApproval!.id).toBe(two);
    expect(
      gets()
        .filter((s) => s.url.startsWith('/orders/B-'))
        .map((s) => s.url),
    ).toEqual(['/orders/B-1']);
    await engine.answerApproval(world.ns, two!, { decision: 'approve', by });
    expect((await waitFor(engine, world.ns, run.id)).status).toBe('Completed');
    expect(
      gets()
        .filter((s) => s.url.startsWith('/orders/B-'))
        .map((s) => s.url),
    ).toEqual(['/orders/B-1', '/orders/B-2']);
  });
});

describe('an approved call, at the moment of acting', () => {
  it('is made once by two concurrent consumers of one approval', async () => {
    const tool = await getVersion(world.db, world.ns, 'tool', 'get-order');
    const connector = await getVersion(world.db, world.ns, 'connector', 'orders-get');
    const input = {
      tool: tool.resource,
      connector: connector.resource,
      arguments: { additionalInputs: { 'path.orderId': 'C-1' } },
      credential: { header: 'X-Api-Key', value: 'sk-orders-123' },
      idempotencyKey: 'concurrent-consumers',
    };
    const prepared = await world.gateway.prepare(input);
    if (!isPreparedRequest(prepared)) throw new Error(JSON.stringify(prepared));
    const id = randomUUID();
    await insertApproval(world.db, {
      id,
      namespace: world.ns,
      runId: null,
      toolCallId: 'concurrent-consumers',
      functionName: 'get-order',
      argumentsJson: '{}',
      requestHash: prepared.hash,
    });
    await answerApprovalRecord(world.db, world.ns, id, { status: 'Approved', reason: null, ...by });
    const use = {
      hash: prepared.hash,
      consume: async (hash: string) =>
        (await consumeApproval(world.db, id, hash))
          ? undefined
          : engineErrors.create('api:approvals:already-used', { id, tool: 'get-order' }),
    };
    const before = gets().length;
    const results = await Promise.all(Array.from({ length: 8 }, () => world.gateway.callApproved(input, use)));
    expect(gets().length - before).toBe(1);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => r.code === 'api:approvals:already-used')).toHaveLength(7);
  });

  it('is not made when the key that started the run was deleted while it waited', async () => {
    const engine = world.engines[0]!;
    const key = await createApiKey(world.db, world.ns, { role: 'user', name: 'short-lived' });
    world.script('support', [{ toolCalls: [lookup('D-1')] }, { text: 'ok' }]);
    const run = await engine.startRun(world.ns, 'support', { inputs: { message: 'D-1?' } }, { keyId: key.id });
    const waiting = await waitFor(engine, world.ns, run.id);
    await deleteApiKey(world.db, world.ns, key.id);
    const before = gets().length;
    await engine.answerRunApproval(world.ns, run.id, waiting.pendingApproval!.id, { decision: 'approve', by });
    expect((await waitFor(engine, world.ns, run.id)).status).toBe('Completed');
    const result = (await engine.listEvents(world.ns, run.id)).find((e) => e.type === 'tool-result')!;
    expect(result.data.code).toBe('api:calls:key-deleted');
    expect(gets().length).toBe(before);
  });
});
