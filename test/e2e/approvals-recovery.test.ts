import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApprovalView, expectWholeEvents } from './helpers/api.js';
import { FIRST_REFUND } from './helpers/model-script.js';
import { expectOneCallOrSameKey, holdFirst, killSender } from './helpers/recovery.js';
import { FAST_RECOVERY, type RunsStack, startRunsStack } from './helpers/stack.js';

// An approved call survives the death of the process making it: two `mt serve` and two `mt worker`
// processes on one PostgreSQL database; right after the approval is recorded, the process that makes
// the approved POST is killed with SIGKILL mid-call.
let stack: RunsStack;

beforeAll(async () => {
  stack = await startRunsStack({ servers: 2, workers: 2, env: FAST_RECOVERY });
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

describe('a worker killed right after an approval is recorded', { timeout: 90_000 }, () => {
  it('makes the approved call once (or retries it with the same Idempotency-Key), and the run completes', async () => {
    const isRefund = (r: { method: string; url: string }) => r.method === 'POST' && r.url === '/orders/A-7007/refund';
    const started = await stack.api.startRun('support-desk', {
      message: 'The lamp of order A-7007 arrived broken, please refund it.',
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const paused = await stack.api.waitForRun(started.body.id, (r) => r.status !== 'Running');
    expect(paused.status, JSON.stringify(paused)).toBe('PendingApproval');
    const approval = paused.pendingApproval as ApprovalView;

    const held = holdFirst(stack, isRefund);
    const approved = await stack.api.request('POST', `/v1/approvals/${approval.id}/approve`, {});
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    await killSender(stack, await held);

    const run = await stack.api.waitForEnd(started.body.id, 60_000);
    expect(run.status, JSON.stringify(run)).toBe('Completed');
    const calls = stack.upstream.requests.filter(isRefund);
    // The held call was never answered, so the run could only finish by retrying it: once, same key.
    expect(calls).toHaveLength(2);
    expectOneCallOrSameKey(calls);
    expect(JSON.parse(calls[0].body)).toEqual(FIRST_REFUND);
    const events = await stack.api.events(run.id);
    expectWholeEvents(events);
    expect(events.filter((e) => e.type === 'approval-requested')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'approval-answered')).toHaveLength(1);
    const after = await stack.api.request<ApprovalView>('GET', `/v1/approvals/${approval.id}`);
    expect(after.body.status).toBe('Approved');
  });
});
