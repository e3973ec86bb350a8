import { describe, expect, it } from 'vitest';
import { type ApprovalView, expectWholeEvents, type RunView } from './helpers/api.js';
import { runsRepoFiles } from './helpers/config-repo.js';
import { FIRST_REFUND, REDRAFTED_REFUND } from './helpers/model-script.js';
import { ORDERS_SECRET, useRunsStack } from './helpers/stack.js';
import { runMt } from './support/harness.js';

// The seed's refund flow end to end on PostgreSQL with the real `mt serve` and `mt worker`: a person
// rejects the first draft with a reason, the model redrafts, the person approves, and the upstream
// receives exactly the approved call, once.
const stack = useRunsStack({ servers: 1, workers: 1 });

const refundCalls = (order: string) => stack.upstream.requests.filter((r) => r.url.endsWith(`/${order}/refund`));
const modelRequestsFor = (order: string) =>
  stack.openai.server.requests.filter((r) => r.conversation.userTexts.some((t) => t.includes(order)));

async function startRefund(order: string, extra: Record<string, unknown> = {}): Promise<RunView> {
  const started = await stack.api.startRun(
    'support-desk',
    { message: `The lamp of order ${order} arrived broken, please refund it.` },
    extra,
  );
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  return started.body;
}

async function pendingOf(id: string, notId?: string): Promise<ApprovalView> {
  const run = await stack.api.waitForRun(
    id,
    (r) => r.status !== 'Running' && !(r.status === 'PendingApproval' && r.pendingApproval?.id === notId),
  );
  expect(run.status, JSON.stringify(run)).toBe('PendingApproval');
  expect(run.pendingApproval).not.toBeNull();
  return run.pendingApproval as ApprovalView;
}

describe('approvals in a run', { timeout: 60_000 }, () => {
  it('pauses before the refund, tells the model of a rejection and why, asks again for the redraft, and makes the approved call once', async () => {
    const run = await startRefund('A-1001');
    const first = await pendingOf(run.id);
    expect(first).toMatchObject({
      functionName: 'refund-order',
      status: 'Pending',
      agentName: 'Support',
      runId: run.id,
    });
    const shown = JSON.parse(first.argumentsJson);
    expect(shown.request).toEqual(FIRST_REFUND);
    expect(JSON.stringify(shown)).toContain('A-1001');
    expect(first.argumentsJson).not.toContain(ORDERS_SECRET);
    // get-order was called (no approval needed); the refund was not.
    expect(stack.upstream.requests.filter((r) => r.url === '/orders/A-1001')).toHaveLength(1);
    expect(refundCalls('A-1001')).toHaveLength(0);
    const listed = await stack.api.request<ApprovalView[] | { approvals: ApprovalView[] }>('GET', '/v1/approvals');
    expect(listed.status).toBe(200);
    const pending = Array.isArray(listed.body) ? listed.body : listed.body.approvals;
    expect(pending.map((a) => a.id)).toContain(first.id);

    const reason = 'Refund at most 25: the lamp still works';
    const rejected = await stack.api.request('POST', `/v1/runs/${run.id}/reject`, { reason });
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);

    const second = await pendingOf(run.id, first.id);
    expect(second.id).not.toBe(first.id);
    expect(second.status).toBe('Pending');
    expect(JSON.parse(second.argumentsJson).request).toEqual(REDRAFTED_REFUND);
    // The model was told, as a tool result, that the call was not made, and why.
    const told = modelRequestsFor('A-1001').find((r) =>
      r.conversation.toolResults.some((t) => t.toolName === 'refund-order'),
    );
    expect(told).toBeDefined();
    const result = told!.conversation.toolResults.find((t) => t.toolName === 'refund-order')!;
    expect(result.content).toContain(reason);
    expect(result.content).toMatch(/not (been )?made|was not called|not called/i);
    expect(refundCalls('A-1001')).toHaveLength(0);
    const old = await stack.api.request<ApprovalView>('GET', `/v1/approvals/${first.id}`);
    expect(old.body).toMatchObject({ id: first.id, status: 'Rejected', reason });

    const approved = await stack.api.request('POST', `/v1/runs/${run.id}/approve`, {});
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const done = await stack.api.waitForEnd(run.id);
    expect(done.status, JSON.stringify(done)).toBe('Completed');
    expect(done.pendingApproval).toBeNull();
    expect(done.result).toContain('R-77');

    const calls = refundCalls('A-1001');
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ method: 'POST', url: '/orders/A-1001/refund' });
    expect(JSON.parse(calls[0].body)).toEqual(REDRAFTED_REFUND);
    expect(calls[0].headers['x-api-key']).toBe(ORDERS_SECRET);

    const events = await stack.api.events(run.id);
    expectWholeEvents(events);
    expect(events.filter((e) => e.type === 'approval-requested')).toHaveLength(2);
    const answers = events.filter((e) => e.type === 'approval-answered');
    expect(answers).toHaveLength(2);
    // Who answered is stored: the key's id and name.
    expect(JSON.stringify(answers[0].data)).toMatch(/keyId/);
    expect(JSON.stringify(events)).not.toContain(ORDERS_SECRET);
  });

  it('answers an approval once under 20 concurrent approvals: one success, 19 conflicts, one upstream call', async () => {
    const run = await startRefund('A-2002');
    const approval = await pendingOf(run.id);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => stack.api.request('POST', `/v1/approvals/${approval.id}/approve`, {})),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(
      statuses.filter((s) => s === 200),
      JSON.stringify(answers.map((a) => a.body)),
    ).toHaveLength(1);
    const conflicts = answers.filter((a) => a.status === 409);
    expect(conflicts).toHaveLength(19);
    expect(new Set(conflicts.map((a) => a.body.code))).toEqual(new Set(['api:approvals:already-answered']));

    const done = await stack.api.waitForEnd(run.id);
    expect(done.status, JSON.stringify(done)).toBe('Completed');
    expect(refundCalls('A-2002')).toHaveLength(1);
    const events = await stack.api.events(run.id);
    expect(events.filter((e) => e.type === 'approval-answered')).toHaveLength(1);
  });

  it('answers once under 20 concurrent approvals through the run (no approvalId): one 200, 19 already-answered, one upstream call', async () => {
    // After the approved refund the model answers (it does not redraft), so no later approval is pending
    // for a request handled after the winner committed: it must still be told the approval was answered.
    const run = await startRefund('A-2102');
    const approval = await pendingOf(run.id);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => stack.api.request('POST', `/v1/runs/${run.id}/approve`, {})),
    );
    const bodies = JSON.stringify(answers.map((a) => [a.status, a.body?.code]));
    expect(
      answers.filter((a) => a.status === 200),
      bodies,
    ).toHaveLength(1);
    const conflicts = answers.filter((a) => a.status === 409);
    expect(conflicts, bodies).toHaveLength(19);
    expect(new Set(conflicts.map((a) => a.body.code)), bodies).toEqual(new Set(['api:approvals:already-answered']));
    for (const conflict of conflicts) expect(conflict.body.error).toContain(approval.id);

    const done = await stack.api.waitForEnd(run.id);
    expect(done.status, JSON.stringify(done)).toBe('Completed');
    expect(refundCalls('A-2102')).toHaveLength(1);
    const events = await stack.api.events(run.id);
    expect(events.filter((e) => e.type === 'approval-requested')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'approval-answered')).toHaveLength(1);
  });

  it('gives an app run (interactive: false) an error tool result for a tool that needs approval, and the run goes on', async () => {
    const run = await startRefund('A-4004', { interactive: false });
    expect(run.interactive).toBe(false);
    const done = await stack.api.waitForEnd(run.id);
    expect(done.status, JSON.stringify(done)).toBe('Completed');
    expect(refundCalls('A-4004')).toHaveLength(0);
    const told = modelRequestsFor('A-4004').find((r) =>
      r.conversation.toolResults.some((t) => t.toolName === 'refund-order'),
    );
    const result = told?.conversation.toolResults.find((t) => t.toolName === 'refund-order');
    expect(result?.content).toMatch(/approv/i);
    const events = await stack.api.events(run.id);
    expect(events.map((e) => e.type)).not.toContain('approval-requested');
  });

  it('refuses to call a tool that requires approval outside a run (409 api:approvals:required), and calls one that does not', async () => {
    const before = stack.upstream.requests.length;
    const refused = await stack.api.request('POST', '/v1/extops/refund-order/call', {
      arguments: { request: { amount: 1, reason: 'test' }, additionalInputs: { 'path.orderId': 'A-5005' } },
    });
    expect([refused.status, refused.body.code]).toEqual([409, 'api:approvals:required']);
    expect(refundCalls('A-5005')).toHaveLength(0);
    const allowed = await stack.api.request('POST', '/v1/extops/get-order/call', {
      arguments: { additionalInputs: { 'path.orderId': 'A-5005' } },
    });
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
    expect(stack.upstream.requests.length).toBe(before + 1);
  });

  it('stops mt interaction-run --wait at the approval, showing the call and the commands that answer it', async () => {
    const env = { MT_API_URL: stack.api.url, MT_API_KEY: stack.adminKey };
    const started = await runMt(
      [
        'interaction-run',
        'support-desk',
        '--input',
        'message=The lamp of order A-6006 arrived broken, please refund it.',
        '--wait',
      ],
      { home: stack.home, env },
    );
    const shown = started.stdout + started.stderr;
    expect(shown).toContain('refund-order');
    expect(shown).toContain('"amount": 40');
    const runId = /mt interaction-approve (\S+)/.exec(shown)?.[1];
    expect(runId, shown).toBeDefined();
    expect(shown).toContain(`mt interaction-reject ${runId}`);
    const approve = await runMt(['interaction-approve', runId!, '--json'], { home: stack.home, env });
    expect(approve.code, approve.stderr).toBe(0);
    const done = await stack.api.waitForEnd(runId!);
    expect(done.status).toBe('Completed');
    expect(refundCalls('A-6006')).toHaveLength(1);
  });

  it('makes the call shown to the approver when a new version is deployed while the run is paused', async () => {
    const run = await startRefund('A-3003');
    const approval = await pendingOf(run.id);
    await stack.api.deploy(runsRepoFiles({ origin: stack.upstream.origin, refundPath: '/v2/orders/{orderId}/refund' }));
    const approved = await stack.api.request('POST', `/v1/approvals/${approval.id}/approve`, {});
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const done = await stack.api.waitForEnd(run.id);
    expect(done.status, JSON.stringify(done)).toBe('Completed');
    const calls = refundCalls('A-3003');
    expect(calls.map((c) => c.url)).toEqual(['/orders/A-3003/refund']);
    expect(JSON.parse(calls[0].body)).toEqual(FIRST_REFUND);
  });
});
