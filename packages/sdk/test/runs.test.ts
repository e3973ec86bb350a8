import { randomBytes } from 'node:crypto';
import { createEgressPolicy } from '@maitento/egress';
import { type RunningServer, startServer } from '@maitento/server';
import {
  createTestDatabase,
  refundDeskRepo,
  refundTurn,
  scriptedModels,
  startRecordingUpstream,
  type TestDatabase,
  type Upstream,
  waitFor,
} from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConflictError,
  Maitento,
  NotFoundError,
  type RunEvent,
  type RunView,
  UnprocessableEntityError,
} from '../src/index.js';

// mt.interactionRuns and mt.approvals against the real server (its own worker, scripted models from
// MT_SCRIPTED_MODELS) and a real upstream on 127.0.0.1.
const ADMIN_KEY = `mt_sdk_runs_${randomBytes(16).toString('hex')}`;
const { dir: scriptsDir, script } = scriptedModels('mt-sdk-scripts-');
let db: TestDatabase;
let server: RunningServer;
let upstream: Upstream;
let mt: Maitento;
/** The JSON bodies the upstream received: the refunds sent. */
const refunds = (): unknown[] => upstream.requests.map((r) => JSON.parse(r.body));

const refund = (amount: number) => refundTurn({ amount });

// Restored in afterAll: files share a worker's process (vitest.config.ts, project `shared`).
const scriptedModelsBefore = process.env.MT_SCRIPTED_MODELS;

beforeAll(async () => {
  process.env.MT_SCRIPTED_MODELS = scriptsDir;
  // Answers {"ok":true}, recording each request.
  upstream = await startRecordingUpstream();
  db = await createTestDatabase('mt_sdk_runs', { migrated: true });
  server = await startServer({
    port: 0,
    databaseUrl: db.url,
    secretKey: randomBytes(32).toString('hex'),
    bootstrapKey: ADMIN_KEY,
    egress: createEgressPolicy({ allow: '127.0.0.1/32' }),
    logger: false,
    message: () => {},
  });
  mt = new Maitento({ baseUrl: server.url, apiKey: ADMIN_KEY, maxRetries: 0 });
  await mt.deploy.create({ files: refundDeskRepo(upstream.origin) });
});

afterAll(async () => {
  if (scriptedModelsBefore === undefined) delete process.env.MT_SCRIPTED_MODELS;
  else process.env.MT_SCRIPTED_MODELS = scriptedModelsBefore;
  await server?.close();
  await db?.drop();
  await upstream?.close();
});

describe('mt.interactionRuns', () => {
  it('run() asks onWaiting once per pending approval, so a rejected call is asked again for its redraft', async () => {
    script('desk', [refund(40), refund(30), { text: 'Refunded 30.' }]);
    const asked: RunView[] = [];
    const done = await mt.interactionRuns.run('desk', {
      inputs: { message: 'refund A-1' },
      onWaiting: async (run) => {
        asked.push(run);
        const approval = run.pendingApproval!;
        if (JSON.parse(approval.argumentsJson).request.amount > 35) {
          await mt.interactionRuns.reject(run.id, { reason: 'at most 30' });
        } else {
          await mt.approvals.approve(approval.id);
        }
      },
    });
    expect(done).toMatchObject({ status: 'Completed', result: 'Refunded 30.' });
    expect(asked.map((r) => r.status)).toEqual(['PendingApproval', 'PendingApproval']);
    expect(new Set(asked.map((r) => r.pendingApproval?.id)).size).toBe(2);
    expect(refunds()).toEqual([{ amount: 30 }]);
    const answered = await mt.approvals.list({ runId: done.id, status: 'all' });
    expect(answered.map((a) => a.status).sort()).toEqual(['Approved', 'Rejected']);
  });

  it('start, get, list, listEvents and events() agree on one run', async () => {
    script('desk', [{ text: 'Hello.' }]);
    const started = await mt.interactionRuns.start('desk', { inputs: { message: 'hi' }, interactive: false });
    expect(started).toMatchObject({ interactive: false, interaction: { name: 'desk', version: 1 } });
    const streamed: RunEvent[] = [];
    for await (const event of mt.interactionRuns.events(started.id)) streamed.push(event);
    expect(streamed.map((e) => e.type)).toEqual(['run-started', 'model-response', 'run-completed']);
    expect(await mt.interactionRuns.listEvents(started.id)).toEqual(streamed);
    expect((await mt.interactionRuns.listEvents(started.id, { after: 2 })).map((e) => e.seq)).toEqual([3]);
    const after: RunEvent[] = [];
    for await (const event of mt.interactionRuns.events(started.id, { after: 1 })) after.push(event);
    expect(after.map((e) => e.seq)).toEqual([2, 3]);
    expect((await mt.interactionRuns.get(started.id)).status).toBe('Completed');
    const page = await mt.interactionRuns.list({ interaction: 'desk', limit: 1 });
    expect(page.runs.map((r) => r.id)).toEqual([started.id]);
    expect(page.nextCursor).toEqual(expect.any(String));
    const next = await mt.interactionRuns.list({ interaction: 'desk', cursor: page.nextCursor ?? undefined });
    expect(next.runs.map((r) => r.id)).not.toContain(started.id);
  });

  it('events() reconnects with Last-Event-ID after a dropped connection and loses or repeats nothing', async () => {
    script('desk', [{ text: 'Hello again.' }]);
    const run = await mt.interactionRuns.start('desk', { inputs: { message: 'hi' } });
    await waitEnded(run.id);
    const lastEventIds: (string | null)[] = [];
    let dropped = false;
    // A fetch that cuts the first stream after its first event, as a flaky network would.
    const flaky: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!String(input).endsWith('/stream')) return response;
      lastEventIds.push(new Headers(init?.headers).get('last-event-id'));
      if (dropped || !response.body) return response;
      dropped = true;
      const reader = response.body.getReader();
      let received = '';
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { value, done } = await reader.read();
          if (done) return controller.close();
          received += new TextDecoder().decode(value);
          const first = received.indexOf('\n\n', received.indexOf('event: run-started'));
          if (received.includes('event: run-started') && first !== -1) {
            // Only the first event gets through; the rest of what the server sent is lost with the connection.
            controller.enqueue(new TextEncoder().encode(received.slice(0, first + 2)));
            await reader.cancel();
            controller.error(new Error('connection reset'));
          }
        },
      });
      return new Response(body, { status: response.status, headers: response.headers });
    };
    const client = new Maitento({ baseUrl: server.url, apiKey: ADMIN_KEY, maxRetries: 0, fetch: flaky });
    const seen: number[] = [];
    for await (const event of client.interactionRuns.events(run.id)) seen.push(event.seq);
    expect(seen).toEqual([1, 2, 3]);
    expect(lastEventIds).toEqual(['0', '1']);
  });

  it('cancel() of an ended run and reject() without a reason reject with typed errors keeping the code', async () => {
    script('desk', [{ text: 'Done.' }]);
    const run = await mt.interactionRuns.start('desk', { inputs: { message: 'x' } });
    await waitEnded(run.id);
    const cancel = await mt.interactionRuns.cancel(run.id).catch((e: unknown) => e);
    expect(cancel).toBeInstanceOf(ConflictError);
    expect((cancel as ConflictError).code).toBe('api:runs:already-ended');
    const missing = await mt.interactionRuns.start('desk', {}).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(UnprocessableEntityError);
    expect((missing as UnprocessableEntityError).code).toBe('api:interactions:input-required');
    const unknown = await mt.interactionRuns.get('00000000-0000-4000-8000-000000000000').catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(NotFoundError);
    const streamed = await (async () => {
      for await (const _ of mt.interactionRuns.events('00000000-0000-4000-8000-000000000000')) {
        // never reached
      }
    })().catch((e: unknown) => e);
    expect(streamed).toBeInstanceOf(NotFoundError);
    expect((streamed as NotFoundError).code).toBe('api:runs:not-found');
    const approval = await mt.approvals.get('00000000-0000-4000-8000-000000000000').catch((e: unknown) => e);
    expect((approval as NotFoundError).code).toBe('api:approvals:not-found');
  });

  it('cancels a waiting run and approvals.reject records the reason', async () => {
    script('desk', [refund(10), { text: 'ok' }]);
    const run = await mt.interactionRuns.start('desk', { inputs: { message: 'x' } });
    const waiting = await waitRun(run.id, (r) => r.status === 'PendingApproval');
    const rejected = await mt.approvals.reject(waiting.pendingApproval!.id, { reason: 'no' });
    expect(rejected).toMatchObject({ status: 'Rejected', reason: 'no', answeredBy: { keyName: 'bootstrap' } });
    const done = await waitEnded(run.id);
    expect(done.status).toBe('Completed');
    script('desk', [refund(10), { text: 'ok' }]);
    const other = await mt.interactionRuns.start('desk', { inputs: { message: 'y' } });
    await waitRun(other.id, (r) => r.status === 'PendingApproval');
    await mt.interactionRuns.cancel(other.id);
    expect((await waitEnded(other.id)).status).toBe('Cancelled');
  });

  it('approve() and reject() send the approvalId given: the approval named is answered, not the one pending', async () => {
    script('desk', [refund(40), refund(30), { text: 'Refunded 30.' }]);
    const before = refunds().length;
    const run = await mt.interactionRuns.start('desk', { inputs: { message: 'refund A-1' } });
    const first = (await waitRun(run.id, (r) => r.status === 'PendingApproval')).pendingApproval!;
    const rejected = await mt.interactionRuns.reject(run.id, { approvalId: first.id, reason: 'at most 30' });
    expect(rejected.id).toBe(run.id);
    expect(await mt.approvals.get(first.id)).toMatchObject({ status: 'Rejected', reason: 'at most 30' });
    const second = (await waitRun(run.id, (r) => r.status === 'PendingApproval' && r.pendingApproval?.id !== first.id))
      .pendingApproval!;
    // Naming the answered approval while the redraft is pending: the server answers that one (409), and the
    // redraft stays pending; without the id it would have answered the redraft.
    const late = await mt.interactionRuns.approve(run.id, { approvalId: first.id }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(ConflictError);
    expect((late as ConflictError).code).toBe('api:approvals:already-answered');
    expect((await mt.approvals.get(second.id)).status).toBe('Pending');
    const lateReject = await mt.interactionRuns
      .reject(run.id, { approvalId: first.id, reason: 'again' })
      .catch((e: unknown) => e);
    expect((lateReject as ConflictError).code).toBe('api:approvals:already-answered');
    // Through another waiting run, the approval named is not the one it waits on: refused, nothing answered.
    const other = await mt.interactionRuns.start('desk', { inputs: { message: 'another' } });
    await waitRun(other.id, (r) => r.status === 'PendingApproval');
    const elsewhere = await mt.interactionRuns.approve(other.id, { approvalId: second.id }).catch((e: unknown) => e);
    expect(elsewhere).toBeInstanceOf(ConflictError);
    expect((elsewhere as ConflictError).code).toBe('api:approvals:not-pending-for-run');
    expect((await mt.approvals.get(second.id)).status).toBe('Pending');
    await mt.interactionRuns.cancel(other.id);

    await mt.interactionRuns.approve(run.id, { approvalId: second.id });
    expect(await mt.approvals.get(second.id)).toMatchObject({
      status: 'Approved',
      answeredBy: { keyName: 'bootstrap' },
    });
    expect((await waitEnded(run.id)).status).toBe('Completed');
    expect(refunds().slice(before)).toEqual([{ amount: 30 }]);
  });
});

/** Polls the run through the SDK until `done(run)`, at most 15 s. */
function waitRun(id: string, done: (run: RunView) => boolean): Promise<RunView> {
  return waitFor(() => mt.interactionRuns.get(id), done, {
    timeoutMs: 15_000,
    describe: (run) => `run ${id} is still ${run?.status}`,
  });
}

function waitEnded(id: string): Promise<RunView> {
  return waitRun(id, (run) => ['Completed', 'Failed', 'Cancelled'].includes(run.status));
}
