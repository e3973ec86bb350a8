import { readFile } from 'node:fs/promises';
import { createPgDb, type Db } from '@maitento/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApprovalView, expectWholeEvents } from './helpers/api.js';
import { FIRST_REFUND } from './helpers/model-script.js';
import { expectOneCallOrSameKey } from './helpers/recovery.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';
import { defaultUpstreamAnswer, type UpstreamRequest } from './helpers/upstream.js';
import type { WorkerProcess } from './helpers/processes.js';

// An approved call survives the death of the `mt worker` that takes it up: one `mt serve` (its own worker
// kept busy by a run held at the model, one run at a time) and one `mt worker` (one run at a time) on one
// PostgreSQL database. Once the approval is recorded and the worker has taken the approved run, the worker
// is killed with SIGKILL. The upstream applies a refund when it receives it, answers slowly (the first
// refund is never answered while the worker lives) and honours Idempotency-Key: a retry under a key it
// has seen replays the first answer without a second refund.
let stack: RunsStack;
let db: Db;

beforeAll(async () => {
  stack = await startRunsStack({ servers: 1, workers: 0, env: { MT_WORKER_CONCURRENCY: '1' } });
  db = createPgDb(stack.db!.url);
}, 90_000);

afterAll(async () => {
  await db?.close();
  stack?.openai.open('busy');
  await stack?.close();
});

/** The run's fencing token (`host:pid:id/job/retry` of the attempt that last claimed it), or null. */
async function claim(runId: string): Promise<string | null> {
  const { rows } = await db.query<{ claim: string | null }>('SELECT claim FROM mt_runs WHERE id = $1', [runId]);
  return rows[0]?.claim ?? null;
}

describe('an mt worker killed right after an approval is recorded', { timeout: 90_000 }, () => {
  it('makes the approved call once: one Idempotency-Key, one refund at the upstream, and the run completes', async () => {
    const order = 'A-7007';
    const isRefund = (r: { method: string; url: string }) => r.method === 'POST' && r.url === `/orders/${order}/refund`;
    // The upstream's ledger: one refund per Idempotency-Key, the answer kept to replay to a retry.
    const refunds = new Map<string, { body: string }>();
    let workerKilled = false;
    stack.upstream.setHandler((request: UpstreamRequest, res) => {
      if (!isRefund(request)) return defaultUpstreamAnswer(request, res);
      const key = String(request.headers['idempotency-key'] ?? '');
      const first = !refunds.has(key);
      if (first) refunds.set(key, { body: request.body });
      // Slow: the refund is made, but its answer does not leave before the worker is killed.
      if (first && !workerKilled) return new Promise(() => {});
      return defaultUpstreamAnswer(request, res);
    });

    // The server's worker takes a run that waits at the model, so the mt worker is the only one executing.
    const busy = await stack.api.startRun('support-desk', { message: 'Order A-1001, where is it? [gate:busy]' });
    expect(busy.status, JSON.stringify(busy.body)).toBe(201);
    await stack.openai.reached('busy');
    const worker: WorkerProcess = await stack.addWorker();
    const cmdline = (await readFile(`/proc/${worker.pid}/cmdline`, 'utf8')).split('\0').filter(Boolean);
    expect(cmdline.slice(-2), cmdline.join(' ')).toEqual([expect.stringMatching(/mt\.js$/), 'worker']);

    const started = await stack.api.startRun('support-desk', {
      message: `The lamp of order ${order} arrived broken, please refund it.`,
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const paused = await stack.api.waitForRun(started.body.id, (r) => r.status !== 'Running');
    expect(paused.status, JSON.stringify(paused)).toBe('PendingApproval');
    const approval = paused.pendingApproval as ApprovalView;
    // The attempt that asked for the approval ended with its job; its token stays until the next claim.
    const asked = await claim(started.body.id);
    expect(asked).not.toBeNull();

    const approved = await stack.api.request('POST', `/v1/approvals/${approval.id}/approve`, {});
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    // The approval is recorded (the row Approved, approval-answered stored with it, in one transaction).
    expect((await stack.api.request<ApprovalView>('GET', `/v1/approvals/${approval.id}`)).body.status).toBe('Approved');
    expect((await stack.api.events(started.body.id)).map((e) => e.type)).toContain('approval-answered');
    // Right after: as soon as a worker has taken the approved run, kill it; it is the mt worker.
    const deadline = Date.now() + 15_000;
    let owner = await claim(started.body.id);
    while (owner === asked) {
      expect(Date.now() < deadline, 'no worker took the approved run in 15 s').toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 5));
      owner = await claim(started.body.id);
    }
    expect(owner?.split(':')[1], `claim ${owner}, mt worker pid ${worker.pid}`).toBe(String(worker.pid));
    await worker.kill();
    workerKilled = true;
    stack.workers.splice(stack.workers.indexOf(worker), 1);
    const sentBeforeKill = stack.upstream.requests.filter(isRefund).length;
    expect(sentBeforeKill).toBeLessThanOrEqual(1);

    // The server's worker is let go; once the dead worker's job has missed its heartbeat, pg-boss retries it there.
    stack.openai.open('busy');
    const run = await stack.api.waitForEnd(started.body.id, 60_000);
    expect(run.status, JSON.stringify(run)).toBe('Completed');
    expect(run.result).toContain('R-77');
    expect((await stack.api.waitForEnd(busy.body.id)).status).toBe('Completed');

    const calls = stack.upstream.requests.filter(isRefund);
    // The killed worker may have sent the refund before it died (then it was made, left unanswered, and is
    // retried once under the same Idempotency-Key) or not (then the worker that resumed the run sends it once).
    expect(calls.length, `refund requests (seen before the kill: ${sentBeforeKill})`).toBeGreaterThanOrEqual(1);
    expect(calls.length, `refund requests (seen before the kill: ${sentBeforeKill})`).toBeLessThanOrEqual(2);
    expectOneCallOrSameKey(calls);
    // The upstream made the refund once: one Idempotency-Key, one entry in its ledger.
    expect(refunds.size).toBe(1);
    expect(JSON.parse([...refunds.values()][0].body)).toEqual(FIRST_REFUND);
    const events = await stack.api.events(run.id);
    expectWholeEvents(events);
    expect(events.filter((e) => e.type === 'approval-requested')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'approval-answered')).toHaveLength(1);
    const results = events.filter(
      (e) => e.type === 'tool-result' && (e.data as { name: string }).name === 'refund-order',
    );
    expect(results).toHaveLength(1);
    const after = await stack.api.request<ApprovalView>('GET', `/v1/approvals/${approval.id}`);
    expect(after.body.status).toBe('Approved');
  });
});
