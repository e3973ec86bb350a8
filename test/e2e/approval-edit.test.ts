import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Maitento } from '@maitento/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, type ApprovalView, api } from './helpers/api.js';
import { runsRepoFiles } from './helpers/config-repo.js';
import { FIRST_REFUND } from './helpers/model-script.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';

// Edit, then approve (decision 0215) on the real `mt serve` and `mt worker`, PostgreSQL, a recording upstream and the
// fake model: the upstream receives exactly the edited body once, an edit outside what the model may set or outside
// the schema is refused with a code, the model's next turn sees the edit, and a two-person policy counts again.
let stack: RunsStack;
const keys: Record<string, { id: string; key: string; api: Api }> = {};
const root = fileURLToPath(new URL('../../', import.meta.url));

// The real CLI, as a person runs it.
function mt(args: string[], key: string) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [`${root}packages/cli/bin/mt.js`, ...args],
      { env: { PATH: process.env.PATH ?? '', MT_API_URL: stack.servers[0].url, MT_API_KEY: key }, timeout: 30_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  stack = await startRunsStack({ servers: 1, workers: 1 });
  for (const name of ['approver', 'approver2']) {
    const made = await stack.api.request('POST', '/v1/keys', { name, role: 'approver' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    keys[name] = { id: made.body.id, key: made.body.key, api: api(stack.servers[0].url, made.body.key) };
  }
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

const refundCalls = (order: string) => stack.upstream.requests.filter((r) => r.url.endsWith(`/${order}/refund`));

async function pendingRefund(order: string): Promise<{ runId: string; approval: ApprovalView }> {
  const started = await stack.api.startRun('support-desk', {
    message: `The lamp of order ${order} arrived broken, please refund it.`,
  });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const run = await stack.api.waitForRun(started.body.id, (r) => r.status !== 'Running');
  expect(run.status, JSON.stringify(run)).toBe('PendingApproval');
  return { runId: run.id, approval: run.pendingApproval as ApprovalView };
}

const edited = (order: string, amount: number) => ({
  request: { amount, reason: 'Refund the lamp only' },
  additionalInputs: { 'path.orderId': order },
});

describe('edit, then approve', { timeout: 90_000 }, () => {
  it('makes exactly the edited call once, shows it again, and tells the model', async () => {
    const { runId, approval } = await pendingRefund('E-1001');
    expect(JSON.parse(approval.argumentsJson).request).toEqual(FIRST_REFUND);
    const path = `/v1/approvals/${approval.id}/approve`;
    // Without the hash the approver saw: refused.
    const noHash = await keys.approver.api.request('POST', path, { arguments: edited('E-1001', 12.5) });
    expect(noHash.status).toBe(422);
    expect(noHash.body.code).toBe('api:approvals:edit-hash-required');
    // The secret's header, a field the schema does not have, another order's path parameter stays the model's to set.
    for (const args of [
      { ...edited('E-1001', 12.5), additionalInputs: { 'path.orderId': 'E-1001', 'header.X-Api-Key': 'mine' } },
      { request: { amount: 12.5, reason: 'x', currency: 'EUR' }, additionalInputs: { 'path.orderId': 'E-1001' } },
      { ...edited('E-1001', 12.5), credential: 'x' },
    ]) {
      const refused = await keys.approver.api.request('POST', path, {
        arguments: args,
        requestHash: approval.requestHash,
      });
      expect(refused.status, JSON.stringify(refused.body)).toBe(422);
      expect(refused.body.code).toBe('api:approvals:edit-not-allowed');
    }
    // Outside the request schema: the schema's complaint.
    const invalid = await keys.approver.api.request('POST', path, {
      arguments: { request: { amount: 'twelve', reason: 'x' }, additionalInputs: { 'path.orderId': 'E-1001' } },
      requestHash: approval.requestHash,
    });
    expect(invalid.status, JSON.stringify(invalid.body)).toBe(422);
    expect(invalid.body.code).toBe('api:approvals:edit-invalid');
    expect(invalid.body.error).toContain('amount');
    // A stale view (another hash) approves nothing.
    const stale = await keys.approver.api.request('POST', path, {
      arguments: edited('E-1001', 12.5),
      requestHash: 'f'.repeat(64),
    });
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe('api:approvals:edit-stale');
    expect((await stack.api.getRun(runId)).status).toBe('PendingApproval');
    expect(refundCalls('E-1001')).toHaveLength(0);

    // The edit: shown again (new arguments, new hash, who edited), then made exactly once.
    const answered = await keys.approver.api.request('POST', path, {
      arguments: edited('E-1001', 12.5),
      requestHash: approval.requestHash,
    });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    expect(answered.body.status).toBe('Approved');
    expect(JSON.parse(answered.body.argumentsJson)).toEqual(edited('E-1001', 12.5));
    expect(answered.body.requestHash).not.toBe(approval.requestHash);
    expect(answered.body.edited).toEqual({ by: { keyId: keys.approver.id, keyName: 'approver' } });
    const run = await stack.api.waitForEnd(runId);
    expect(run.status, JSON.stringify(run)).toBe('Completed');
    const calls = refundCalls('E-1001');
    expect(calls).toHaveLength(1);
    expect(JSON.parse(calls[0].body)).toEqual({ amount: 12.5, reason: 'Refund the lamp only' });
    // The model's next turn was told (its answer repeats the tool message it got), the result is the upstream's.
    expect(JSON.stringify(run.result)).toContain('A person changed the arguments of this call');
    expect(JSON.stringify(run.result)).toContain('R-77');
    const events = await stack.api.request('GET', `/v1/runs/${runId}/events`);
    const answer = events.body.find((e: { type: string }) => e.type === 'approval-answered');
    expect(answer.data.arguments).toEqual(edited('E-1001', 12.5));
    const result = events.body.find(
      (e: { type: string; data: { name?: string } }) => e.type === 'tool-result' && e.data.result?.includes?.('R-77'),
    );
    expect(result.data.result).not.toContain('A person changed');
    // The audit log has the edit, before and after.
    const audit = await stack.api.request('GET', '/v1/audit?action=approval.edited');
    const row = audit.body.entries?.find?.((e: { target: { id: string } }) => e.target.id === approval.id);
    expect(row?.after?.argumentsJson, JSON.stringify(audit.body)).toContain('12.5');
    expect(row?.before?.argumentsJson).toContain('40');
  });

  it('edits through the TypeScript SDK and the CLI', async () => {
    const sdk = new Maitento({ baseUrl: stack.servers[0].url, apiKey: keys.approver.key });
    const one = await pendingRefund('E-3001');
    const approved = await sdk.interactionRuns.approve(one.runId, {
      approvalId: one.approval.id,
      arguments: edited('E-3001', 5),
      requestHash: one.approval.requestHash,
    });
    expect(approved.id).toBe(one.runId);
    expect((await stack.api.waitForEnd(one.runId)).status).toBe('Completed');
    expect(refundCalls('E-3001').map((c) => JSON.parse(c.body))).toEqual([
      { amount: 5, reason: 'Refund the lamp only' },
    ]);

    const two = await pendingRefund('E-3002');
    const bad = await mt(['approval-approve', two.approval.id, '--arguments', '[1]'], keys.approver.key);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('api:cli:arguments-invalid');
    const secret = await mt(
      [
        'approval-approve',
        two.approval.id,
        '--arguments',
        JSON.stringify({
          ...edited('E-3002', 6),
          additionalInputs: { 'path.orderId': 'E-3002', 'header.X-Api-Key': 'k' },
        }),
        '--hash',
        two.approval.requestHash,
      ],
      keys.approver.key,
    );
    expect(secret.code).not.toBe(0);
    expect(secret.stderr).toContain('api:approvals:edit-not-allowed');
    const ok = await mt(
      [
        'approval-approve',
        two.approval.id,
        '--arguments',
        JSON.stringify(edited('E-3002', 6)),
        '--hash',
        two.approval.requestHash,
        '--json',
      ],
      keys.approver.key,
    );
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout).edited.by.keyId).toBe(keys.approver.id);
    expect((await stack.api.waitForEnd(two.runId)).status).toBe('Completed');
    expect(refundCalls('E-3002').map((c) => JSON.parse(c.body))).toEqual([
      { amount: 6, reason: 'Refund the lamp only' },
    ]);
  });

  it("edits in the console: the form holds the model's arguments; a refused edit is shown; the edited call is made once", async () => {
    const origin = stack.servers[0].url;
    const form = await fetch(`${origin}/console/login`);
    const csrfCookie = (form.headers.get('set-cookie') ?? '').split(';')[0];
    const loginCsrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
    const login = await fetch(`${origin}/console/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin, cookie: csrfCookie },
      body: new URLSearchParams({ key: keys.approver.key, _csrf: loginCsrf }),
    });
    expect(login.status).toBe(303);
    const cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const { runId, approval } = await pendingRefund('E-4001');
    const page = await fetch(`${origin}/console/approvals/${approval.id}`, { headers: { cookie } });
    const text = await page.text();
    expect(page.status).toBe(200);
    // Pre-filled with the model's arguments (HTML-escaped JSON), never the run inputs or the secret.
    const area = /<textarea id="arguments"[^>]*>([\s\S]*?)<\/textarea>/.exec(text)?.[1] ?? '';
    expect(area).toContain('40');
    expect(area).toContain('path.orderId');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(text)?.[1] ?? '';
    const post = (args: object) =>
      fetch(`${origin}/console/approvals/${approval.id}/approve`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin, cookie },
        body: new URLSearchParams({ _csrf: csrf, hash: approval.requestHash, arguments: JSON.stringify(args) }),
      });
    const refused = await post({
      ...edited('E-4001', 3),
      additionalInputs: { 'path.orderId': 'E-4001', 'header.X-Api-Key': 'k' },
    });
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain('was refused');
    expect(refundCalls('E-4001')).toHaveLength(0);
    const ok = await post(edited('E-4001', 3));
    expect(ok.status).toBe(303);
    expect((await stack.api.waitForEnd(runId)).status).toBe('Completed');
    expect(refundCalls('E-4001').map((c) => JSON.parse(c.body))).toEqual([
      { amount: 3, reason: 'Refund the lamp only' },
    ]);
  });

  it('with a two-person policy, an edit drops the approvals of the old request', async () => {
    const files = runsRepoFiles({ origin: stack.upstream.origin }).map((f) =>
      f.path.endsWith('/refund-order.mtr') ? { ...f, content: `${f.content}approval.count = 2\n` } : f,
    );
    await stack.api.deploy(files);
    const { runId, approval } = await pendingRefund('E-2001');
    const path = `/v1/approvals/${approval.id}/approve`;
    const first = await keys.approver.api.request('POST', path, {});
    expect(first.body.status).toBe('Pending');
    // The second approver edits: the first approval was of the old request, so only the editor's counts.
    const edit = await keys.approver2.api.request('POST', path, {
      arguments: edited('E-2001', 20),
      requestHash: approval.requestHash,
    });
    expect(edit.status, JSON.stringify(edit.body)).toBe(200);
    expect(edit.body.status).toBe('Pending');
    expect(edit.body.approvedBy.map((a: { keyId: string }) => a.keyId)).toEqual([keys.approver2.id]);
    expect(refundCalls('E-2001')).toHaveLength(0);
    // The first approver approves the edited request (it saw it again): Approved, the edited call made once.
    const again = await keys.approver.api.request('POST', path, {});
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.status).toBe('Approved');
    expect((await stack.api.waitForEnd(runId)).status).toBe('Completed');
    const calls = refundCalls('E-2001');
    expect(calls).toHaveLength(1);
    expect(JSON.parse(calls[0].body)).toEqual({ amount: 20, reason: 'Refund the lamp only' });
  });
});
