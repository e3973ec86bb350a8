import { issuePlatformToken } from '@maitento/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORDERS_SECRET, type RunsWorld, startRunsWorld } from './runs-helpers.js';

// Runs and approvals over REST, on a real database with a real engine and worker (scripted models).
let world: RunsWorld;

const lookup = { toolCalls: [{ name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'A-1' } } }] };
const refund = (amount: number) => ({
  toolCalls: [
    {
      name: 'refund-order',
      arguments: { request: { amount, reason: 'arrived broken' }, additionalInputs: { 'path.orderId': 'A-1' } },
    },
  ],
});

async function start(interaction: string, body: Record<string, unknown>, key?: string) {
  return world.request('POST', `/v1/interactions/${interaction}/runs`, body, key);
}

beforeAll(async () => {
  world = await startRunsWorld();
});

afterAll(async () => {
  await world?.close();
});

describe('starting and reading runs', () => {
  it('answers 201 with the run, which then completes with the answer and its stored events', async () => {
    world.script('support', [lookup, { text: 'Order A-1 was delivered.' }]);
    const res = await start('support', { inputs: { message: 'Where is A-1?' } });
    expect(res.statusCode, res.body).toBe(201);
    const run = res.json();
    expect(run).toMatchObject({
      interaction: { name: 'support', version: 1 },
      interactive: true,
      inputs: { message: 'Where is A-1?' },
      pendingApproval: null,
      // Nothing spent yet, and no budget of the interaction or the request (docs/runs.md#usage-and-budgets).
      usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
      budget: null,
    });
    expect(Object.keys(run).sort()).toEqual(
      [
        'agent',
        'budget',
        'createdAt',
        'error',
        'id',
        'inputs',
        'interaction',
        'interactive',
        'parentRunId',
        'pendingApproval',
        'result',
        'status',
        'updatedAt',
        'usage',
        'versions',
      ].sort(),
    );
    const done = await world.waitFor(run.id);
    expect(done).toMatchObject({ status: 'Completed', result: 'Order A-1 was delivered.', error: null });
    expect(done.versions).toEqual(
      expect.arrayContaining([
        { kind: 'interaction', name: 'support', version: 1 },
        { kind: 'agent', name: 'support-agent', version: 1 },
        { kind: 'tool', name: 'get-order', version: 1 },
      ]),
    );
    const events = (await world.request('GET', `/v1/runs/${run.id}/events`)).json();
    expect(events.map((e: { type: string }) => e.type)).toEqual([
      'run-started',
      'model-response',
      'tool-call-started',
      'tool-result',
      'model-response',
      'run-completed',
    ]);
    expect(events.map((e: { seq: number }) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    const later = (await world.request('GET', `/v1/runs/${run.id}/events?after=4`)).json();
    expect(later.map((e: { seq: number }) => e.seq)).toEqual([5, 6]);
    expect(JSON.stringify(events)).not.toContain(ORDERS_SECRET);
  });

  it('refuses a missing, unknown or malformed input with its code, and an unknown interaction with 404', async () => {
    const missing = await start('support', {});
    expect([missing.statusCode, missing.json().code]).toEqual([422, 'api:interactions:input-required']);
    const unknown = await start('support', { inputs: { mesage: 'hi' } });
    expect([unknown.statusCode, unknown.json().code]).toEqual([422, 'api:interactions:input-unknown']);
    expect(unknown.json().error).toContain('message');
    const notFound = await start('nope', { inputs: {} });
    expect([notFound.statusCode, notFound.json().code]).toEqual([404, 'api:interactions:not-found']);
    const badBody = await start('support', { inputs: { message: 'x' }, interactive: 'yes' });
    expect([badBody.statusCode, badBody.json().code]).toEqual([400, 'api:request:invalid']);
    const extra = await start('support', { inputs: { message: 'x' }, mode: 'fast' });
    expect(extra.json().error).toContain('unknown field mode');
    const noVersion = await start('support', { inputs: { message: 'x' }, version: 7 });
    expect([noVersion.statusCode, noVersion.json().code]).toEqual([404, 'api:interactions:not-found']);
  });

  it('lists runs newest first, filtered by interaction and status, one page at a time', async () => {
    world.script('support', [{ text: 'Hello.' }]);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const run = (await start('support', { inputs: { message: `hi ${i}` } })).json();
      ids.push(run.id);
      await world.waitFor(run.id);
    }
    const first = (await world.request('GET', '/v1/runs?interaction=support&status=Completed&limit=2')).json();
    expect(first.runs.map((r: { id: string }) => r.id)).toEqual([ids[2], ids[1]]);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = (
      await world.request('GET', `/v1/runs?interaction=support&status=Completed&limit=2&cursor=${first.nextCursor}`)
    ).json();
    expect(second.runs[0].id).toBe(ids[0]);
    expect((await world.request('GET', '/v1/runs?interaction=slow')).json()).toEqual({ runs: [], nextCursor: null });
    const badStatus = await world.request('GET', '/v1/runs?status=Done');
    expect([badStatus.statusCode, badStatus.json().code]).toEqual([400, 'api:request:invalid']);
    const badLimit = await world.request('GET', '/v1/runs?limit=500');
    expect(badLimit.statusCode).toBe(400);
  });

  it('answers 404 api:runs:not-found for a run that does not exist, on every run route', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    for (const [method, url] of [
      ['GET', `/v1/runs/${id}`],
      ['GET', `/v1/runs/${id}/events`],
      ['GET', `/v1/runs/${id}/stream`],
      ['POST', `/v1/runs/${id}/cancel`],
      ['POST', `/v1/runs/${id}/approve`],
    ] as const) {
      const res = await world.request(method, url);
      expect([res.statusCode, res.json().code], url).toEqual([404, 'api:runs:not-found']);
    }
  });
});

describe('cancelling a run', () => {
  it('cancels a run that has not ended, and refuses to cancel it again with 409', async () => {
    world.script('gated', [{ text: 'done' }]);
    world.gate.close();
    const run = (await start('slow', { inputs: { order: 'A-9' } })).json();
    const cancel = await world.request('POST', `/v1/runs/${run.id}/cancel`);
    expect(cancel.statusCode, cancel.body).toBe(200);
    // The model is still held at the gate: only the cancel can end the run.
    const done = await world.waitFor(run.id);
    world.gate.open();
    expect(done.status).toBe('Cancelled');
    const again = await world.request('POST', `/v1/runs/${run.id}/cancel`, {});
    expect([again.statusCode, again.json().code]).toEqual([409, 'api:runs:already-ended']);
  });
});

describe('approvals', () => {
  it('pauses at a call that needs approval, takes a rejection with a reason, and makes the approved redraft once', async () => {
    world.script('support', [lookup, refund(40), refund(30), { text: 'Refunded 30.' }]);
    const run = (await start('support', { inputs: { message: 'A-1 arrived broken' } })).json();
    const waiting = await world.waitFor(run.id);
    expect(waiting.status).toBe('PendingApproval');
    const first = waiting.pendingApproval;
    expect(first).toMatchObject({
      runId: run.id,
      functionName: 'refund-order',
      status: 'Pending',
      agentName: 'Support',
      answeredBy: null,
    });
    expect(JSON.parse(first.argumentsJson)).toMatchObject({ request: { amount: 40 } });
    expect(first.argumentsJson).not.toContain(ORDERS_SECRET);

    const listed = (await world.request('GET', `/v1/approvals?runId=${run.id}`)).json();
    expect(listed.map((a: { id: string }) => a.id)).toEqual([first.id]);
    expect((await world.request('GET', `/v1/approvals/${first.id}`)).json()).toEqual(first);

    const noReason = await world.request('POST', `/v1/runs/${run.id}/reject`, {});
    expect([noReason.statusCode, noReason.json().code]).toEqual([422, 'api:approvals:reason-required']);
    const rejected = await world.request('POST', `/v1/runs/${run.id}/reject`, { reason: 'Refund 30, not 40' });
    expect(rejected.statusCode, rejected.body).toBe(200);

    const redraft = await world.waitFor(run.id, (r) => r.status !== 'Running' && r.pendingApproval?.id !== first.id);
    expect(redraft.status).toBe('PendingApproval');
    const second = redraft.pendingApproval;
    expect(second.id).not.toBe(first.id);
    expect(JSON.parse(second.argumentsJson)).toMatchObject({ request: { amount: 30 } });
    const answered = (await world.request('GET', `/v1/approvals/${first.id}`)).json();
    expect(answered).toMatchObject({ status: 'Rejected', reason: 'Refund 30, not 40' });
    expect(answered.answeredBy).toEqual({ keyId: expect.any(String), keyName: 'bootstrap' });

    const approved = await world.request('POST', `/v1/approvals/${second.id}/approve`);
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json()).toMatchObject({ id: second.id, status: 'Approved' });
    const done = await world.waitFor(run.id);
    expect(done).toMatchObject({ status: 'Completed', result: 'Refunded 30.' });
    const refunds = world.upstream.seen.filter((r) => r.method === 'POST');
    expect(refunds.map((r) => JSON.parse(r.body))).toEqual([{ amount: 30, reason: 'arrived broken' }]);

    const twice = await world.request('POST', `/v1/approvals/${second.id}/approve`, {});
    expect([twice.statusCode, twice.json().code]).toEqual([409, 'api:approvals:already-answered']);
    // Through the run, with no approvalId: the run waits on nothing now, and its latest approval was answered.
    const late = await world.request('POST', `/v1/runs/${run.id}/approve`, {});
    expect([late.statusCode, late.json().code]).toEqual([409, 'api:approvals:already-answered']);
    expect(late.json().error).toContain(second.id);
    const events = (await world.request('GET', `/v1/runs/${run.id}/events`)).json();
    const answers = events.filter((e: { type: string }) => e.type === 'approval-answered');
    expect(answers).toHaveLength(2);
    expect(JSON.stringify(events)).not.toContain(ORDERS_SECRET);
    expect((await world.request('GET', `/v1/approvals?runId=${run.id}&status=all`)).json()).toHaveLength(2);
    expect((await world.request('GET', `/v1/approvals?runId=${run.id}`)).json()).toEqual([]);
  });

  it("records a user key's id and name as who approved, and refuses an agent's platform token", async () => {
    const created = await world.request('POST', '/v1/keys', { role: 'user', name: 'alice' });
    const alice = created.json();
    world.script('support', [refund(40), { text: 'Refunded.' }]);
    const run = (await start('support', { inputs: { message: 'refund A-1' } }, alice.key)).json();
    const waiting = await world.waitFor(run.id);
    const token = issuePlatformToken(world.secretKey, 'default');
    expect((await world.request('GET', `/v1/runs/${run.id}`, undefined, token)).statusCode).toBe(200);
    const agent = await world.request('POST', `/v1/runs/${run.id}/approve`, {}, token);
    expect([agent.statusCode, agent.json().code]).toEqual([403, 'api:approvals:person-required']);
    const byId = await world.request('POST', `/v1/approvals/${waiting.pendingApproval.id}/approve`, {}, token);
    expect([byId.statusCode, byId.json().code]).toEqual([403, 'api:approvals:person-required']);
    const approved = await world.request(
      'POST',
      `/v1/runs/${run.id}/approve`,
      { approvalId: waiting.pendingApproval.id },
      alice.key,
    );
    expect(approved.statusCode, approved.body).toBe(200);
    const answered = (await world.request('GET', `/v1/approvals/${waiting.pendingApproval.id}`)).json();
    expect(answered.answeredBy).toEqual({ keyId: alice.id, keyName: 'alice' });
    expect(answered.answeredAt).toEqual(expect.any(String));
    expect((await world.waitFor(run.id)).status).toBe('Completed');
  });

  it('answers 404 for an unknown approval, and 409 for an answer to a run that is not waiting', async () => {
    const missing = await world.request('GET', '/v1/approvals/00000000-0000-4000-8000-000000000000');
    expect([missing.statusCode, missing.json().code]).toEqual([404, 'api:approvals:not-found']);
    world.script('support', [{ text: 'Hi.' }]);
    const run = (await start('support', { inputs: { message: 'hi' } })).json();
    await world.waitFor(run.id);
    const res = await world.request('POST', `/v1/runs/${run.id}/approve`);
    expect([res.statusCode, res.json().code]).toEqual([409, 'api:runs:not-waiting']);
  });
});
