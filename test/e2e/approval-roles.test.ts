import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, type ApprovalView, api } from './helpers/api.js';
import { runsRepoFiles } from './helpers/config-repo.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';

// Roles and approval policies (docs/roles.md) on the real `mt serve` and `mt worker`, PostgreSQL, a recording
// upstream and the fake model: who may answer an approval, two distinct approvers, separation of duties, and a
// policy that follows the tool's version.
let stack: RunsStack;
const keys: Record<string, { id: string; key: string; api: Api }> = {};

beforeAll(async () => {
  stack = await startRunsStack({ servers: 1, workers: 1 });
  for (const [name, role] of [
    ['runner', 'runner'],
    ['approver', 'approver'],
    ['approver2', 'approver'],
    ['user', 'user'],
  ] as const) {
    const made = await stack.api.request('POST', '/v1/keys', { name, role });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.role).toBe(role);
    keys[name] = { id: made.body.id, key: made.body.key, api: api(stack.servers[0].url, made.body.key) };
  }
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

const refundCalls = (order: string) => stack.upstream.requests.filter((r) => r.url.endsWith(`/${order}/refund`));

async function pendingRefund(by: Api, order: string): Promise<{ runId: string; approval: ApprovalView }> {
  const started = await by.startRun('support-desk', {
    message: `The lamp of order ${order} arrived broken, please refund it.`,
  });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const run = await by.waitForRun(started.body.id, (r) => r.status !== 'Running');
  expect(run.status, JSON.stringify(run)).toBe('PendingApproval');
  return { runId: run.id, approval: run.pendingApproval as ApprovalView };
}

describe('roles', { timeout: 60_000 }, () => {
  it('lists the new roles', async () => {
    const listed = await stack.api.request('GET', '/v1/keys');
    expect(listed.status).toBe(200);
    const roles = Object.fromEntries(listed.body.map((k: { name: string; role: string }) => [k.name, k.role]));
    expect(roles).toMatchObject({ runner: 'runner', approver: 'approver', user: 'user' });
  });

  it('a runner key starts a run and reads it, but cannot answer its approval; an approver can', async () => {
    const { runId, approval } = await pendingRefund(keys.runner.api, 'R-2001');
    for (const path of [`/v1/approvals/${approval.id}/approve`, `/v1/runs/${runId}/approve`]) {
      const refused = await keys.runner.api.request('POST', path, {});
      expect(refused.status, JSON.stringify(refused.body)).toBe(403);
      expect(refused.body.code).toBe('api:approvals:role-forbidden');
    }
    const rejected = await keys.runner.api.request('POST', `/v1/approvals/${approval.id}/reject`, { reason: 'no' });
    expect(rejected.body.code).toBe('api:approvals:role-forbidden');
    expect(refundCalls('R-2001')).toHaveLength(0);
    // Its own run it reads; another key's run is not found for it, and not listed.
    expect((await keys.runner.api.request('GET', `/v1/runs/${runId}`)).status).toBe(200);
    const other = await pendingRefund(keys.user.api, 'R-2002');
    const hidden = await keys.runner.api.request('GET', `/v1/runs/${other.runId}`);
    expect(hidden.status).toBe(404);
    expect(hidden.body.code).toBe('api:runs:not-found');
    // Approvals too: its own run's, not another key's.
    expect((await keys.runner.api.request('GET', `/v1/approvals/${approval.id}`)).status).toBe(200);
    const otherApproval = await keys.runner.api.request('GET', `/v1/approvals/${other.approval.id}`);
    expect(otherApproval.body.code).toBe('api:approvals:not-found');
    const approvals = (await keys.runner.api.request('GET', '/v1/approvals')).body.map((a: { id: string }) => a.id);
    expect(approvals).toContain(approval.id);
    expect(approvals).not.toContain(other.approval.id);
    const listed = await keys.runner.api.request('GET', '/v1/runs?limit=200');
    const ids = listed.body.runs.map((r: { id: string }) => r.id);
    expect(ids).toContain(runId);
    expect(ids).not.toContain(other.runId);
    // The approver answers it; the approver may not start a run.
    const approved = await keys.approver.api.request('POST', `/v1/approvals/${approval.id}/approve`, {});
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body.answeredBy.keyId).toBe(keys.approver.id);
    expect((await stack.api.waitForEnd(runId)).status).toBe('Completed');
    expect(refundCalls('R-2001')).toHaveLength(1);
    const start = await keys.approver.api.startRun('support-desk', { message: 'refund R-2003' });
    expect(start.status).toBe(403);
    expect(start.body.code).toBe('api:auth:forbidden');
    // The user key still approves its own run (the reference text's onWaiting flow).
    const own = await keys.user.api.request('POST', `/v1/runs/${other.runId}/approve`, {});
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect((await stack.api.waitForEnd(other.runId)).status).toBe('Completed');
  });

  it('refuses a runner on the console approval pages', async () => {
    const origin = stack.servers[0].url;
    // Signs in with a runner key as a person would (the sign-in form and its CSRF cookie), then opens the approvals.
    const made = await stack.api.request('POST', '/v1/keys', { name: 'runner-console', role: 'runner' });
    const form = await fetch(`${origin}/console/login`);
    const csrfCookie = (form.headers.get('set-cookie') ?? '').split(';')[0];
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
    const login = await fetch(`${origin}/console/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin, cookie: csrfCookie },
      body: new URLSearchParams({ key: made.body.key, _csrf: csrf }),
    });
    expect(login.status).toBe(303);
    const cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const page = await fetch(`${origin}/console/approvals`, { headers: { cookie }, redirect: 'manual' });
    expect(page.status).toBe(403);
    expect(await page.text()).toContain('api:approvals:role-forbidden');
  });
});

describe('roles over MCP', { timeout: 60_000 }, () => {
  it('a runner key calls a tool that needs approval over MCP and cannot approve it; an approver does, and the call is made once', async () => {
    const client = new Client({ name: 'e2e-roles', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.servers[0].url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${keys.runner.key}` } },
      }),
    );
    try {
      const before = refundCalls('M-4001').length;
      const waiting = client.callTool({
        name: 'refund-order',
        arguments: { request: { amount: 7, reason: 'mcp' }, additionalInputs: { 'path.orderId': 'M-4001' } },
      });
      let approval: ApprovalView | undefined;
      for (let i = 0; i < 200 && approval === undefined; i++) {
        const listed = await stack.api.request<ApprovalView[]>('GET', '/v1/approvals');
        approval = listed.body.find((a) => a.runId === null && a.argumentsJson.includes('M-4001'));
        if (approval === undefined) await new Promise((r) => setTimeout(r, 50));
      }
      expect(approval).toBeDefined();
      const refused = await keys.runner.api.request('POST', `/v1/approvals/${approval!.id}/approve`, {});
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe('api:approvals:role-forbidden');
      expect(refundCalls('M-4001').length).toBe(before);
      const approved = await keys.approver.api.request('POST', `/v1/approvals/${approval!.id}/approve`, {});
      expect(approved.status, JSON.stringify(approved.body)).toBe(200);
      const result = await waiting;
      expect(result.isError, JSON.stringify(result)).toBe(false);
      expect(refundCalls('M-4001').length).toBe(before + 1);
    } finally {
      await client.close();
    }
    // An approver key may not use the MCP endpoints (it calls no tools).
    const mcp = await fetch(`${stack.servers[0].url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.approver.key}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(mcp.status).toBe(403);
  });
});

describe('approval policies', { timeout: 90_000 }, () => {
  it('follow the tool version: two distinct approvers, the starter excluded, named approvers only', async () => {
    // A run pinned to v1 (no policy) waits while v2 with a policy is deployed.
    const v1 = await pendingRefund(keys.user.api, 'P-3001');
    const files = runsRepoFiles({ origin: stack.upstream.origin }).map((f) =>
      f.path.endsWith('/refund-order.mtr')
        ? {
            ...f,
            content: `${f.content}approval.approvers = ["approver", "admin"]\napproval.count = 2\napproval.excludeStarter = true\n`,
          }
        : f,
    );
    await stack.api.deploy(files);

    const v2 = await pendingRefund(stack.api, 'P-3002');
    // The admin started it: excluded although admins are approvers.
    const starter = await stack.api.request('POST', `/v1/approvals/${v2.approval.id}/approve`, {});
    expect(starter.status, JSON.stringify(starter.body)).toBe(403);
    expect(starter.body.code).toBe('api:approvals:starter-excluded');
    // A user key is not among the approvers.
    const user = await keys.user.api.request('POST', `/v1/approvals/${v2.approval.id}/approve`, {});
    expect(user.status).toBe(403);
    expect(user.body.code).toBe('api:approvals:not-an-approver');
    // The first approver: recorded, still Pending; the same approver again is refused.
    const first = await keys.approver.api.request('POST', `/v1/approvals/${v2.approval.id}/approve`, {});
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.status).toBe('Pending');
    expect(first.body.approvedBy.map((a: { keyId: string }) => a.keyId)).toEqual([keys.approver.id]);
    const again = await keys.approver.api.request('POST', `/v1/approvals/${v2.approval.id}/approve`, {});
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('api:approvals:same-approver');
    expect((await stack.api.getRun(v2.runId)).status).toBe('PendingApproval');
    expect(refundCalls('P-3002')).toHaveLength(0);
    // The second, distinct approver: Approved, the call made once.
    const second = await keys.approver2.api.request('POST', `/v1/approvals/${v2.approval.id}/approve`, {});
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body.status).toBe('Approved');
    expect((await stack.api.waitForEnd(v2.runId)).status).toBe('Completed');
    expect(refundCalls('P-3002')).toHaveLength(1);

    // The v1 run keeps v1's (no) policy: its starter, a user key, approves it alone.
    const own = await keys.user.api.request('POST', `/v1/approvals/${v1.approval.id}/approve`, {});
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(own.body.status).toBe('Approved');
    expect((await stack.api.waitForEnd(v1.runId)).status).toBe('Completed');
  });
});
