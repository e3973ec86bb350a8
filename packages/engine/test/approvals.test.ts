import type { Db, Queryable } from '@maitento/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor, type World, ordersWorld, type TestUpstream } from './helpers.js';

let world: World;
let upstream: TestUpstream;
const by = { keyId: 'k1', keyName: 'alice', role: 'user' as const };
const refund = (amount: number) => ({
  toolCalls: [{ name: 'refund-order', arguments: { request: { amount, reason: 'Blue mug arrived smashed' } } }],
});

beforeAll(async () => {
  ({ world, upstream } = await ordersWorld(() => ({ body: { refunded: true } })));
});
afterAll(async () => {
  await world?.close();
});

// The database as a worker sees it, where a person answers an approval the moment the transaction storing it commits
// (before the worker stores run-waiting): the fastest answer there can be.
function answeredAtOnce(db: Db, answer: (approvalId: string) => Promise<unknown>): Db {
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'transaction') {
        return async <T>(fn: (tx: Queryable) => Promise<T>): Promise<T> => {
          let approvalId: string | undefined;
          const result = await target.transaction((tx) =>
            fn({
              exec: (sql) => tx.exec(sql),
              query: async <R>(text: string, params?: unknown[]) => {
                const answered = await tx.query<R>(text, params);
                // The approval's insert (a statement that also writes its webhook deliveries: store/src/runs/approvals.ts).
                if (text.includes('INSERT INTO mt_approvals')) approvalId = (answered.rows[0] as { id: string }).id;
                return answered;
              },
            }),
          );
          if (approvalId !== undefined) await answer(approvalId);
          return result;
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('approvals', () => {
  it('waits, takes a rejection with a reason, asks again for the redraft, and makes exactly the approved call once', async () => {
    world.script('support', [refund(20), refund(12.5), { text: 'Refunded 12.50.' }]);
    const engine = await world.engine();
    const started = await engine.startRun(world.ns, 'refund', { inputs: { message: 'mug broken', orderId: 'A-1001' } });
    const first = await waitFor(engine, world.ns, started.id);
    expect(first.status).toBe('PendingApproval');
    expect(first.pendingApproval).toMatchObject({
      functionName: 'refund-order',
      status: 'Pending',
      agentName: 'Support',
    });
    expect(JSON.parse(first.pendingApproval!.argumentsJson)).toEqual({
      request: { amount: 20, reason: 'Blue mug arrived smashed' },
      additionalInputs: { 'path.orderId': 'A-1001' },
    });
    await expect(
      engine.answerRunApproval(world.ns, started.id, undefined, { decision: 'reject', by }),
    ).rejects.toMatchObject({ code: 'api:approvals:reason-required' });
    await engine.answerRunApproval(world.ns, started.id, undefined, {
      decision: 'reject',
      reason: 'Refund the mug only',
      by,
    });
    const second = await waitFor(
      engine,
      world.ns,
      started.id,
      (r) => r.status === 'PendingApproval' && r.pendingApproval?.id !== first.pendingApproval!.id,
    );
    expect(JSON.parse(second.pendingApproval!.argumentsJson).request.amount).toBe(12.5);
    await expect(
      engine.answerApproval(world.ns, first.pendingApproval!.id, { decision: 'approve', by }),
    ).rejects.toMatchObject({ code: 'api:approvals:already-answered', status: 409 });
    // 20 concurrent answers: one wins.
    const answers = await Promise.allSettled(
      Array.from({ length: 20 }, () =>
        engine.answerApproval(world.ns, second.pendingApproval!.id, { decision: 'approve', by }),
      ),
    );
    expect(answers.filter((a) => a.status === 'fulfilled')).toHaveLength(1);
    const losers = answers.filter((a): a is PromiseRejectedResult => a.status === 'rejected');
    expect(losers).toHaveLength(19);
    expect(losers.every((l) => l.reason.code === 'api:approvals:already-answered')).toBe(true);
    const done = await waitFor(engine, world.ns, started.id);
    expect(done.status).toBe('Completed');
    const posts = upstream.seen.filter((s) => s.method === 'POST');
    expect(posts).toHaveLength(1);
    expect(posts[0]!.url).toBe('/orders/A-1001/refund');
    expect(JSON.parse(posts[0]!.body)).toEqual({ amount: 12.5, reason: 'Blue mug arrived smashed' });
    const events = await engine.listEvents(world.ns, started.id);
    const rejected = events.filter((e) => e.type === 'tool-result')[0]!.data;
    expect(rejected.code).toBe('api:approvals:rejected');
    expect(String(rejected.result)).toContain('NOT made');
    expect(String(rejected.result)).toContain('Refund the mug only');
    const answered = events.filter((e) => e.type === 'approval-answered').map((e) => e.data);
    expect(answered.map((a) => a.decision)).toEqual(['reject', 'approve']);
    expect(answered[1]!.by).toEqual({ keyId: by.keyId, keyName: by.keyName });
  });

  it('stores run-waiting with the PendingApproval status, after the other calls of the turn, so a follower never stops early', async () => {
    world.script('support', [
      {
        toolCalls: [
          { name: 'refund-order', arguments: { request: { amount: 5, reason: 'Chipped' } } },
          { name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'A-1002' } } },
        ],
      },
      { text: 'Done.' },
    ]);
    const engine = await world.engine();
    const started = await engine.startRun(world.ns, 'refund', { inputs: { message: 'chipped', orderId: 'A-1002' } });
    const waiting = await waitFor(engine, world.ns, started.id);
    expect(waiting.status).toBe('PendingApproval');
    const events = await engine.listEvents(world.ns, started.id);
    const types = events.map((e) => e.type);
    expect(types.at(-1)).toBe('run-waiting');
    expect(types.indexOf('approval-requested')).toBeLessThan(types.lastIndexOf('tool-result'));
    expect(types.lastIndexOf('tool-result')).toBeLessThan(types.indexOf('run-waiting'));
    const refundCall = events.find((e) => e.type === 'approval-requested')!.data.toolCallId;
    expect(events.at(-1)!.data).toEqual({ toolCallIds: [refundCall] });
    await engine.answerRunApproval(world.ns, started.id, undefined, { decision: 'reject', reason: 'No', by });
    const done = await waitFor(engine, world.ns, started.id);
    expect(done.status).toBe('Completed');
    const after = await engine.listEvents(world.ns, started.id);
    expect(after.filter((e) => e.type === 'run-waiting')).toHaveLength(1);
  });

  it('refuses an approved call whose request changed since it was approved', async () => {
    world.script('support', [refund(5), { text: 'ok' }]);
    const engine = world.engines[0]!;
    const started = await engine.startRun(world.ns, 'refund', { inputs: { message: 'x', orderId: 'C-1' } });
    const waiting = await waitFor(engine, world.ns, started.id);
    await world.db.query("UPDATE mt_approvals SET request_hash = 'tampered' WHERE id = $1", [
      waiting.pendingApproval!.id,
    ]);
    const before = upstream.seen.length;
    await engine.answerRunApproval(world.ns, started.id, undefined, { decision: 'approve', by });
    const done = await waitFor(engine, world.ns, started.id);
    expect(done.status).toBe('Completed');
    const result = (await engine.listEvents(world.ns, started.id)).find((e) => e.type === 'tool-result')!.data;
    expect(result.code).toBe('api:approvals:request-changed');
    expect(upstream.seen.length).toBe(before);
  });

  it('gives an app run an error result for a tool that needs approval, and goes on', async () => {
    world.script('support', [refund(5), { text: 'could not refund' }]);
    const engine = world.engines[0]!;
    const started = await engine.startRun(world.ns, 'refund', {
      inputs: { message: 'x', orderId: 'N-1' },
      interactive: false,
    });
    const done = await waitFor(engine, world.ns, started.id);
    expect(done.status).toBe('Completed');
    const result = (await engine.listEvents(world.ns, started.id)).find((e) => e.type === 'tool-result')!.data;
    expect(result.code).toBe('api:approvals:no-one-to-ask');
  });

  it('fails the run when its approval expires, and cancels a waiting run at once', async () => {
    world.script('support', [refund(5), { text: 'ok' }]);
    // Only this engine's worker runs from here on, so the approvals carry its expiry.
    await world.engines[0]!.close();
    const engine = await world.engine({ approvalTtlMs: 300 });
    const started = await engine.startRun(world.ns, 'refund', { inputs: { message: 'x', orderId: 'T-1' } });
    await waitFor(engine, world.ns, started.id);
    const failed = await waitFor(engine, world.ns, started.id, (r) => r.status === 'Failed', 8000);
    expect(failed.error?.code).toBe('api:approvals:expired');

    await engine.close();
    const patient = await world.engine();
    const other = await patient.startRun(world.ns, 'refund', { inputs: { message: 'x', orderId: 'T-2' } });
    const waiting = await waitFor(engine, world.ns, other.id, (r) => r.status === 'PendingApproval');
    const cancelled = await engine.cancelRun(world.ns, other.id);
    expect(cancelled.status).toBe('Cancelled');
    expect((await engine.getApproval(world.ns, waiting.pendingApproval!.id)).status).toBe('Expired');
    await expect(engine.cancelRun(world.ns, other.id)).rejects.toMatchObject({ code: 'api:runs:already-ended' });
  });

  it('holds no worker while a run waits: with one run at a time, another run completes meanwhile, and no job of the waiting run is active', async () => {
    // From here on only this engine's worker runs, and it executes one run at a time.
    for (const running of world.engines.splice(0)) await running.close().catch(() => {});
    const engine = await world.engine({ worker: { concurrency: 1 } });
    world.script('support', [refund(7), { text: 'Refunded 7.' }]);
    const waiting = await engine.startRun(world.ns, 'refund', { inputs: { message: 'x', orderId: 'W-1' } });
    expect((await waitFor(engine, world.ns, waiting.id)).status).toBe('PendingApproval');
    const active = async () =>
      (
        await world.db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pgboss.job WHERE singleton_key = $1 AND state = 'active'",
          [waiting.id],
        )
      ).rows[0]!.n;
    // The job is completed just after the run's last write (its status), so it is waited for, within 2 s.
    const noneActive = async () => {
      const deadline = Date.now() + 2000;
      while ((await active()) !== 0) {
        if (Date.now() > deadline) throw new Error(`a job of run ${waiting.id} is still active after 2 s`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    await noneActive();

    // The other run's first turn is the script's first; the waiting run's next turn is its second.
    world.script('support', [{ text: 'Hello.' }, { text: 'Refunded 7.' }]);
    const other = await engine.startRun(world.ns, 'support', { inputs: { message: 'hi' } });
    const done = await waitFor(engine, world.ns, other.id, (r) => r.status !== 'Running', 5000);
    expect(done).toMatchObject({ status: 'Completed', result: 'Hello.' });
    expect((await engine.getRun(world.ns, waiting.id)).status).toBe('PendingApproval');
    expect(await active()).toBe(0);

    await engine.answerRunApproval(world.ns, waiting.id, undefined, { decision: 'approve', by });
    const finished = await waitFor(engine, world.ns, waiting.id);
    expect(finished).toMatchObject({ status: 'Completed', result: 'Refunded 7.' });
    await noneActive();
  });

  it('does not lose an answer stored between the approval and run-waiting: the run goes on and makes the call once', async () => {
    // Only this test's worker executes runs: it is the one that sees the answer come at once.
    for (const engine of world.engines.splice(0)) await engine.close();
    world.script('support', [refund(7), { text: 'Refunded 7.' }]);
    const api = await world.engine({ worker: false });
    const worker = await world.engine({
      db: answeredAtOnce(world.db, (id) => api.answerApproval(world.ns, id, { decision: 'approve', by })),
    });
    try {
      const before = upstream.seen.length;
      const started = await api.startRun(world.ns, 'refund', { inputs: { message: 'mug', orderId: 'A-1003' } });
      const done = await waitFor(worker, world.ns, started.id, (run) => run.status === 'Completed', 5000);
      expect(done.result).toBe('Refunded 7.');
      expect(upstream.seen.length - before).toBe(1);
      const types = (await api.listEvents(world.ns, started.id)).map((e) => e.type);
      expect(types).not.toContain('run-waiting');
    } finally {
      // The answering worker must not answer any other approval.
      for (const engine of world.engines.splice(0)) await engine.close();
    }
  });
});
