import { randomUUID } from 'node:crypto';
import {
  answerApprovalRecord,
  appendRunEvents,
  cancelRequested,
  claimRun,
  createNamespace,
  createPgDb,
  type Db,
  dueLimitWaits,
  expireApprovals,
  findApproval,
  findRun,
  insertApproval,
  insertRun,
  listRunEvents,
  listRunSummaries,
  overviewCharts,
  runsOverview,
  migrate,
  requestCancel,
  setRunBudget,
  usageFigures,
} from '@maitento/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { bothBackends } from './backends.js';

const NS = 'runs-a';
const OTHER = 'runs-b';

async function newRun(db: Db, namespace = NS, interaction = 'support'): Promise<string> {
  const id = randomUUID();
  await insertRun(
    db,
    {
      id,
      namespace,
      interaction,
      interactionVersion: 1,
      versions: [{ kind: 'interaction', name: interaction, version: 1 }],
      inputs: { message: 'hi' },
      interactive: true,
    },
    { type: 'run-started', data: {} },
  );
  return id;
}

// The run's new seq an append resolves with (or false).
async function append(db: Db, ...args: Parameters<typeof appendRunEvents> extends [unknown, ...infer R] ? R : never) {
  const written = await db.transaction((tx) => appendRunEvents(tx, ...args));
  return written === false ? false : written.seq;
}

async function newApproval(db: Db, runId: string, namespace = NS, ttlSeconds?: number) {
  return insertApproval(db, {
    id: randomUUID(),
    namespace,
    runId,
    toolCallId: `call-${randomUUID().slice(0, 8)}`,
    step: 1,
    functionName: 'refund-order',
    argumentsJson: '{"request":{"amount":1}}',
    requestHash: 'h',
    ttlSeconds,
  });
}

const backends = bothBackends('mt_store_runs');

describe.each(backends)('runs SQL on %s', (_name, open) => {
  let db: Db;
  let done: () => Promise<void>;

  beforeAll(async () => {
    ({ db, done } = await open());
    await migrate(db);
    await createNamespace(db, NS);
    await createNamespace(db, OTHER);
  });
  afterAll(async () => {
    await done?.();
  });

  it('adds the tokens and cost of appended model responses to the run in the same statement (schema 30)', async () => {
    const id = await newRun(db, NS, 'usage-sums');
    const response = (input: number | null, output: number | null, costUsd?: number | null) => ({
      type: 'model-response',
      data: {
        step: 1,
        usage: { inputTokens: input, outputTokens: output },
        ...(costUsd === undefined ? {} : { costUsd }),
      },
    });
    await append(db, id, { statuses: ['Running'] }, [response(300, 100, 0.0014), { type: 'tool-result', data: {} }]);
    await append(db, id, { statuses: ['Running'] }, [response(300, 100, 0.0014), response(null, 7, null)]);
    // A fenced-off append adds nothing.
    expect(await append(db, id, { statuses: ['Completed'] }, [response(1000, 1000, 1)])).toBe(false);
    await append(db, id, { statuses: ['Running'] }, [response(11, 7)]);
    const run = await findRun(db, id, NS);
    expect(run?.usage).toEqual({ inputTokens: 611, outputTokens: 214, costUsd: 0.0028 });
    const [listed] = await listRunSummaries(db, NS, { interaction: 'usage-sums', limit: 10 });
    expect(listed?.usage).toEqual(run?.usage);
    const [figures] = await usageFigures(db, NS, { by: 'interaction', since: run!.createdAt });
    expect(figures).toEqual({
      key: 'usage-sums',
      runs: 1,
      toolCalls: 1,
      inputTokens: 611,
      outputTokens: 214,
      costUsd: 0.0028,
    });
  });

  it('stores a run’s budget, changes it only while the run waits for it (PendingBudget), and cancels it then', async () => {
    const id = randomUUID();
    await insertRun(
      db,
      {
        id,
        namespace: NS,
        interaction: 'budgeted',
        interactionVersion: 1,
        versions: [],
        inputs: {},
        interactive: true,
        budget: { tokens: 1000, costUsd: null, onExceeded: 'wait' },
      },
      { type: 'run-started', data: {} },
    );
    expect((await findRun(db, id, NS))?.budget).toEqual({ tokens: 1000, costUsd: null, onExceeded: 'wait' });
    const bigger = { tokens: 5000, costUsd: 0.25, onExceeded: 'fail' } as const;
    expect(await setRunBudget(db, id, bigger)).toBe(false);
    await append(db, id, { statuses: ['Running'] }, [{ type: 'budget-exceeded', data: {} }], {
      status: 'PendingBudget',
    });
    expect(await setRunBudget(db, id, bigger)).toBe(true);
    expect((await findRun(db, id, NS))?.budget).toEqual(bigger);
    expect((await findRun(db, await newRun(db), NS))?.budget).toBeNull();
    // A run that waits for its budget can be cancelled, like any waiting run.
    expect((await requestCancel(db, NS, id))?.status).toBe('PendingBudget');
  });

  it('a run waiting for a limit (PendingLimit) is due once its until passed, and a cancel reaches it, as one PendingBudget', async () => {
    const later = await newRun(db);
    const due = await newRun(db);
    const wait = (until: Date) => [{ type: 'limit-waiting', data: { until: until.toISOString() } }];
    await append(db, later, { statuses: ['Running'] }, wait(new Date(Date.now() + 3_600_000)), {
      status: 'PendingLimit',
    });
    await append(db, due, { statuses: ['Running'] }, wait(new Date(Date.now() - 1000)), { status: 'PendingLimit' });
    const found = await dueLimitWaits(db);
    expect(found).toContain(due);
    expect(found).not.toContain(later);
    expect((await requestCancel(db, NS, later))?.status).toBe('PendingLimit');
    const budgeted = await newRun(db);
    await append(db, budgeted, { statuses: ['Running'] }, [{ type: 'budget-exceeded', data: {} }], {
      status: 'PendingBudget',
    });
    expect((await requestCancel(db, NS, budgeted))?.status).toBe('PendingBudget');
  });

  it('numbers events 1..n per run across appends, several in one append, in order', async () => {
    const a = await newRun(db);
    const b = await newRun(db);
    await append(db, a, { statuses: ['Running'] }, [
      { type: 'model-response', data: { step: 1 } },
      { type: 'tool-call-started', data: { toolCallId: 'x' } },
    ]);
    expect(await append(db, a, { statuses: ['Running'] }, [{ type: 'tool-result', data: { ok: true } }])).toBe(4);
    await append(db, b, { statuses: ['Running'] }, [{ type: 'model-response', data: { step: 1 } }]);
    const events = await listRunEvents(db, a);
    expect(events.map((e) => [e.seq, e.type])).toEqual([
      [1, 'run-started'],
      [2, 'model-response'],
      [3, 'tool-call-started'],
      [4, 'tool-result'],
    ]);
    expect(events[3]!.data).toEqual({ ok: true });
    expect((await listRunEvents(db, a, 2)).map((e) => e.seq)).toEqual([3, 4]);
    expect((await listRunEvents(db, b)).map((e) => e.seq)).toEqual([1, 2]);
    expect((await findRun(db, a))!.lastSeq).toBe(4);
  });

  it("lets only the attempt whose token the run holds write: a later attempt's claim fences the earlier one", async () => {
    const id = await newRun(db);
    const claimed = await claimRun(db, id, 'job-1/0');
    expect(claimed?.run.claim).toBe('job-1/0');
    // The claim reads the run's events in the same statement.
    expect(claimed?.events).toEqual(await listRunEvents(db, id));
    expect(await append(db, id, { claim: 'job-1/1' }, [{ type: 'model-response', data: {} }])).toBe(false);
    expect(await append(db, id, { claim: 'job-1/0' }, [{ type: 'model-response', data: {} }])).toBe(2);
    expect((await listRunEvents(db, id)).map((e) => e.type)).toEqual(['run-started', 'model-response']);

    // pg-boss retried the job (the first attempt stopped heartbeating): the retry claims the run, and the stalled
    // first attempt's next write is refused, however late it comes.
    expect((await claimRun(db, id, 'job-1/1'))?.run.claim).toBe('job-1/1');
    expect(await append(db, id, { claim: 'job-1/0' }, [{ type: 'tool-result', data: {} }])).toBe(false);
    expect(await append(db, id, { claim: 'job-1/1' }, [{ type: 'tool-result', data: {} }])).toBe(3);
    // The token has no expiry and no renewal: it stays until the next claim.
    expect((await findRun(db, id))!.claim).toBe('job-1/1');
  });

  it('drops the lease: no lease_until column, no index on it (schema 8)', async () => {
    const { rows } = await db.query<{ column_name: string }>(
      "SELECT column_name FROM information_schema.columns WHERE table_name = 'mt_runs' AND column_name LIKE 'lease%'",
    );
    expect(rows).toEqual([]);
    const indexes = await db.query<{ indexname: string }>(
      "SELECT indexname FROM pg_indexes WHERE tablename = 'mt_runs' AND indexdef LIKE '%lease%'",
    );
    expect(indexes.rows).toEqual([]);
  });

  it('fences a write with expectSeq: refused after another event or a cancel request, leaving the run as it was', async () => {
    const id = await newRun(db);
    await claimRun(db, id, 'w1');
    expect(await append(db, id, { claim: 'w1', expectSeq: 0 }, [], { status: 'PendingApproval' })).toBe(false);
    await requestCancel(db, NS, id);
    expect(await append(db, id, { claim: 'w1', expectSeq: 1 }, [], { status: 'PendingApproval' })).toBe(false);
    const run = await findRun(db, id);
    expect(run).toMatchObject({ status: 'Running', claim: 'w1', lastSeq: 1, cancelRequested: true });
    expect(await cancelRequested(db, [id, randomUUID()])).toEqual([id]);

    const other = await newRun(db);
    await claimRun(db, other, 'w1');
    expect(
      await append(db, other, { claim: 'w1', expectSeq: 1 }, [], {
        status: 'PendingApproval',
      }),
    ).toBe(1);
    expect(await findRun(db, other)).toMatchObject({ status: 'PendingApproval' });
    // A waiting run is not a worker's: the claim fence no longer holds (it needs Running), the status fence does.
    expect(await append(db, other, { claim: 'w1' }, [{ type: 'x', data: {} }])).toBe(false);
    expect(await claimRun(db, other, 'w1')).toBeUndefined();
    expect(
      await append(db, other, { statuses: ['PendingApproval'] }, [{ type: 'run-cancelled', data: {} }], {
        status: 'Cancelled',
      }),
    ).toBe(2);
    expect(await append(db, other, { statuses: ['PendingApproval', 'Running'] }, [{ type: 'x', data: {} }])).toBe(
      false,
    );
  });

  it('stores the result or the error with the final status in the same write', async () => {
    const id = await newRun(db);
    await claimRun(db, id, 'w1');
    await append(db, id, { claim: 'w1' }, [{ type: 'run-failed', data: { code: 'api:models:error' } }], {
      status: 'Failed',
      error: { code: 'api:models:error', message: 'boom' },
    });
    expect(await findRun(db, id)).toMatchObject({
      status: 'Failed',
      errorCode: 'api:models:error',
      errorMessage: 'boom',
      result: null,
      lastSeq: 2,
    });
    expect(await requestCancel(db, NS, id)).toBeUndefined();
  });

  it('writes nothing when the events insert fails: the seq bump rolls back with it', async () => {
    const id = await newRun(db);
    await expect(
      db.transaction(async (tx) => {
        await appendRunEvents(tx, id, { statuses: ['Running'] }, [{ type: 'model-response', data: {} }]);
        throw new Error('after the write');
      }),
    ).rejects.toThrow('after the write');
    expect((await findRun(db, id))!.lastSeq).toBe(1);
    expect(await listRunEvents(db, id)).toHaveLength(1);
    expect(await append(db, id, { statuses: ['Running'] }, [{ type: 'model-response', data: {} }])).toBe(2);
  });

  it('answers an approval once: of concurrent answers exactly one wins', async () => {
    const run = await newRun(db);
    const approval = await newApproval(db, run);
    expect(approval.status).toBe('Pending');
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        answerApprovalRecord(db, NS, approval.id, {
          status: i % 2 === 0 ? 'Approved' : 'Rejected',
          reason: i % 2 === 0 ? null : 'no',
          keyId: `key-${i}`,
          keyName: `name-${i}`,
        }),
      ),
    );
    const winners = answers.filter((a) => a !== undefined);
    expect(winners).toHaveLength(1);
    const stored = await findApproval(db, approval.id, NS);
    expect(stored).toMatchObject({
      status: winners[0]!.status,
      answeredByKeyId: winners[0]!.answeredByKeyId,
      answeredByKeyName: winners[0]!.answeredByKeyName,
    });
    expect(stored!.answeredAt).not.toBeNull();
  });

  it('refuses to answer an expired approval and expires it in the sweep', async () => {
    const run = await newRun(db);
    const approval = await newApproval(db, run, NS, 0.05);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect((await findApproval(db, approval.id, NS))!.expired).toBe(true);
    expect(
      await answerApprovalRecord(db, NS, approval.id, { status: 'Approved', reason: null, keyId: 'k', keyName: 'n' }),
    ).toBeUndefined();
    expect((await expireApprovals(db)).map((a) => a.id)).toContain(approval.id);
    expect((await findApproval(db, approval.id))!.status).toBe('Expired');
  });

  it("does not find, answer or cancel another namespace's run or approval", async () => {
    const run = await newRun(db, OTHER);
    const approval = await newApproval(db, run, OTHER);
    expect(await findRun(db, run, NS)).toBeUndefined();
    expect((await findRun(db, run, OTHER))?.id).toBe(run);
    expect((await findRun(db, run))?.id).toBe(run);
    expect(await findApproval(db, approval.id, NS)).toBeUndefined();
    expect(
      await answerApprovalRecord(db, NS, approval.id, { status: 'Approved', reason: null, keyId: 'k', keyName: 'n' }),
    ).toBeUndefined();
    expect((await findApproval(db, approval.id, OTHER))!.status).toBe('Pending');
    expect(await requestCancel(db, NS, run)).toBeUndefined();
    expect((await findRun(db, run))!.cancelRequested).toBe(false);
    expect((await listRunSummaries(db, NS, { limit: 1000 })).map((r) => r.id)).not.toContain(run);
  });

  it('keeps created_at at the precision of the cursor (milliseconds): runs started within one millisecond page in id order, none skipped', async () => {
    await createNamespace(db, 'same-ms');
    const ids = await Promise.all(Array.from({ length: 20 }, () => newRun(db, 'same-ms')));
    const { rows } = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM mt_runs WHERE namespace = 'same-ms' AND created_at <> date_trunc('milliseconds', created_at)",
    );
    expect(rows[0]!.n).toBe(0);
    const seen: string[] = [];
    let after: { createdAt: string; id: string } | undefined;
    for (;;) {
      const page = await listRunSummaries(db, 'same-ms', { limit: 1, after });
      if (page.length === 0) break;
      seen.push(page[0]!.id);
      after = { createdAt: page[0]!.createdAt, id: page[0]!.id };
    }
    expect(seen.sort()).toEqual([...ids].sort());
  });

  it('lists a run as a summary: its result cut to 200 characters (not bytes) with resultTruncated, the pending approval by id, no inputs', async () => {
    await createNamespace(db, 'summaries');
    const [short, exact, long, waiting] = await Promise.all([1, 2, 3, 4].map(() => newRun(db, 'summaries')));
    const results = new Map([
      [short!, 'é'.repeat(150)],
      [exact!, 'é'.repeat(200)],
      [long!, `${'é'.repeat(200)}and more`],
    ]);
    for (const [id, result] of results) {
      await append(db, id, { statuses: ['Running'] }, [], { status: 'Completed', result });
    }
    const approval = await newApproval(db, waiting!, 'summaries');
    await append(db, waiting!, { statuses: ['Running'] }, [], { status: 'PendingApproval' });
    const listed = new Map((await listRunSummaries(db, 'summaries', { limit: 10 })).map((r) => [r.id, r]));
    expect([listed.get(short!)!.resultSummary, listed.get(short!)!.resultTruncated]).toEqual([
      results.get(short!),
      false,
    ]);
    expect([listed.get(exact!)!.resultSummary, listed.get(exact!)!.resultTruncated]).toEqual([
      results.get(exact!),
      false,
    ]);
    expect([listed.get(long!)!.resultSummary, listed.get(long!)!.resultTruncated]).toEqual(['é'.repeat(200), true]);
    expect([listed.get(waiting!)!.resultSummary, listed.get(waiting!)!.pendingApprovalId]).toEqual([null, approval.id]);
    expect(listed.get(long!)!.pendingApprovalId).toBeNull();
    expect(Object.keys(listed.get(long!)!)).not.toContain('inputs');
  });

  it('filters runs by an agent they pinned (any version), not by a connector or tool of that name', async () => {
    await createNamespace(db, 'by-agent');
    const [helper, other, tool] = await Promise.all([1, 2, 3].map(() => newRun(db, 'by-agent')));
    const pin = (id: string, versions: unknown[]) =>
      db.query('UPDATE mt_runs SET versions = $2::jsonb WHERE id = $1', [id, JSON.stringify(versions)]);
    await pin(helper!, [
      { kind: 'interaction', name: 'support', version: 1 },
      { kind: 'agent', name: 'helper', version: 3 },
    ]);
    await pin(other!, [{ kind: 'agent', name: 'other', version: 1 }]);
    await pin(tool!, [{ kind: 'tool', name: 'helper', version: 1 }]);
    const listed = await listRunSummaries(db, 'by-agent', { agent: 'helper', limit: 10 });
    expect(listed.map((r) => r.id)).toEqual([helper]);
    expect(await listRunSummaries(db, 'by-agent', { limit: 10 })).toHaveLength(3);
  });

  it('pages runs newest first with the (createdAt, id) cursor, each once, filtered by interaction and status', async () => {
    await createNamespace(db, 'paging');
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push(await newRun(db, 'paging', i % 2 === 0 ? 'even' : 'odd'));
    // Equal timestamps for some: the id breaks the tie, so no run is skipped or repeated.
    await db.query("UPDATE mt_runs SET created_at = '2026-01-01T00:00:00Z' WHERE id = ANY($1::uuid[])", [
      ids.slice(2, 5),
    ]);
    const seen: string[] = [];
    let after: { createdAt: string; id: string } | undefined;
    for (;;) {
      const page = await listRunSummaries(db, 'paging', { limit: 2, after });
      seen.push(...page.map((r) => r.id));
      if (page.length < 2) break;
      const last = page[page.length - 1]!;
      after = { createdAt: last.createdAt, id: last.id };
    }
    expect(seen).toHaveLength(7);
    expect(new Set(seen)).toEqual(new Set(ids));
    const all = await listRunSummaries(db, 'paging', { limit: 100 });
    expect(all.map((r) => r.id)).toEqual(seen);
    for (let i = 1; i < all.length; i++) {
      const [a, b] = [all[i - 1]!, all[i]!];
      expect(a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.id > b.id)).toBe(true);
    }
    const even = await listRunSummaries(db, 'paging', { limit: 100, interaction: 'even' });
    expect(even.map((r) => r.interaction)).toEqual(['even', 'even', 'even', 'even']);
    await requestCancel(db, 'paging', ids[0]!);
    await append(db, ids[0]!, { statuses: ['Running'] }, [], { status: 'Cancelled' });
    expect((await listRunSummaries(db, 'paging', { limit: 100, status: 'Cancelled' })).map((r) => r.id)).toEqual([
      ids[0],
    ]);
  });

  it('filters runs by a time window, text in the id and an error code; the overview counts them (decision 0330)', async () => {
    await createNamespace(db, 'window');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await newRun(db, 'window'));
    const set = (id: string, sql: string, values: unknown[] = []) =>
      db.query(`UPDATE mt_runs SET ${sql} WHERE id = $1`, [id, ...values]);
    // Two old runs (a week ago), one failed recently with a code, one waiting on an approval, one running.
    await set(ids[0]!, "created_at = now() - interval '7 days', status = 'Completed'");
    await set(ids[1]!, "created_at = now() - interval '6 days', status = 'Failed', error_code = 'api:old:code'");
    await set(ids[2]!, "status = 'Failed', error_code = 'api:new:code'");
    await set(ids[3]!, "status = 'PendingApproval', updated_at = now() - interval '2 hours'");
    await newApproval(db, ids[3]!, 'window');
    const since = new Date(Date.now() - 24 * 3600 * 1000).toISOString();
    const list = (filter: Parameters<typeof listRunSummaries>[2]) =>
      listRunSummaries(db, 'window', filter).then((rows) => rows.map((r) => r.id).sort());
    expect(await list({ limit: 10, since })).toEqual([ids[2], ids[3], ids[4]].sort());
    expect(await list({ limit: 10, until: since })).toEqual([ids[0], ids[1]].sort());
    expect(await list({ limit: 10, errorCode: 'api:old:code' })).toEqual([ids[1]]);
    expect(await list({ limit: 10, idContains: ids[4]!.slice(9, 18).toUpperCase() })).toEqual([ids[4]]);
    expect(await list({ limit: 10, idContains: 'not-an-id' })).toEqual([]);

    const overview = await runsOverview(db, 'window', { since });
    expect(overview.byStatus).toEqual([
      { status: 'Failed', count: 1 },
      { status: 'PendingApproval', count: 1 },
      { status: 'Running', count: 1 },
    ]);
    expect(overview.waiting).toMatchObject([{ status: 'PendingApproval', count: 1, oldestRunId: ids[3] }]);
    expect(Date.now() - Date.parse(overview.waiting[0]!.oldestSince)).toBeGreaterThan(3600 * 1000);
    expect(overview.failed).toMatchObject([{ code: 'api:new:code', count: 1 }]);
    expect(overview.approvals.count).toBe(1);
    // A runner key's view: only the runs it started (none here).
    const mine = await runsOverview(db, 'window', { since, startedByKeyId: 'no-such-key' });
    expect(mine.byStatus).toEqual([]);
    expect(mine.waiting).toEqual([]);
  });

  it('draws the overview’s charts from runs an hour by status, answered approvals’ waits, tool results and spend', async () => {
    await createNamespace(db, 'charts');
    const [a, b, c] = await Promise.all([1, 2, 3].map(() => newRun(db, 'charts', 'desk')));
    const other = await newRun(db, 'charts', 'tickets');
    const set = (id: string, sql: string) => db.query(`UPDATE mt_runs SET ${sql} WHERE id = $1`, [id]);
    await set(a!, "status = 'Completed', input_tokens = 300, output_tokens = 100, cost_usd = 0.0014");
    await set(b!, "status = 'Failed', created_at = now() - interval '3 hours', input_tokens = 30, output_tokens = 10");
    await set(c!, "created_at = now() - interval '8 days'");
    await set(other, "status = 'Completed', input_tokens = 1, output_tokens = 1");
    const result = (name: string, ok: boolean, durationMs: number) => ({
      type: 'tool-result',
      data: { name, ok, durationMs },
    });
    await append(db, a!, { statuses: ['Completed'] }, [
      result('get-order', true, 100),
      result('get-order', false, 900),
      result('refund-order', true, 50),
    ]);
    // Approvals answered after 1 s, 2 s … 10 s: p50 5.5 s, p95 9.55 s; a pending one does not count.
    for (let i = 1; i <= 10; i++) {
      const approval = await newApproval(db, a!, 'charts');
      await db.query(
        "UPDATE mt_approvals SET status = 'Approved', created_at = now() - interval '1 hour', " +
          "answered_at = now() - interval '1 hour' + $2 * interval '1 second' WHERE id = $1",
        [approval.id, i],
      );
    }
    await newApproval(db, b!, 'charts');
    const since = (hours: number) => new Date(Date.now() - hours * 3600 * 1000).toISOString();
    const charts = await overviewCharts(db, 'charts', { since7d: since(168), since24h: since(24) });
    expect(charts.hourly.map((h) => [h.status, h.count]).sort()).toEqual([
      ['Completed', 2],
      ['Failed', 1],
    ]);
    expect(charts.hourly.every((h) => h.hour.endsWith(':00:00.000Z'))).toBe(true);
    expect(charts.approvalWaits).toMatchObject({ count: 10 });
    expect(charts.approvalWaits!.p50Ms).toBeCloseTo(5500, 3);
    expect(charts.approvalWaits!.p95Ms).toBeCloseTo(9550, 3);
    expect(charts.tools).toEqual([
      { name: 'get-order', calls: 2, errors: 1, p95Ms: 860 },
      { name: 'refund-order', calls: 1, errors: 0, p95Ms: 50 },
    ]);
    expect(charts.spend).toEqual([
      { interaction: 'desk', runs: 2, tokens: 440, costUsd: 0.0014 },
      { interaction: 'tickets', runs: 1, tokens: 2, costUsd: 0 },
    ]);
    // A runner key's: only its runs (none), and no approvals.
    const mine = await overviewCharts(db, 'charts', { since7d: since(168), since24h: since(24), startedByKeyId: 'k' });
    expect(mine).toEqual({ hourly: [], approvalWaits: null, tools: [], spend: [] });
  });

  it('executeSql: parameterless SQL may hold several statements and answers the rows of each; with values, one statement', async () => {
    const multi = await db.executeSql(
      'BEGIN; CREATE TEMP TABLE IF NOT EXISTS q (n int); INSERT INTO q VALUES (1), (2) RETURNING n; ' +
        'SELECT 3 AS n; COMMIT',
    );
    expect(multi.rows).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    const one = await db.executeSql('SELECT $1::int + 1 AS n, $2::text AS s', [41, 'x']);
    expect(one.rows).toEqual([{ n: 42, s: 'x' }]);
    expect((await db.executeSql('SELECT 1 AS a')).rows).toEqual([{ a: 1 }]);
  });

  it('executeSql: a failing multi-statement transaction rolls back and leaves the connection usable', async () => {
    await db.executeSql('CREATE TABLE IF NOT EXISTS exec_probe (n int PRIMARY KEY)');
    await expect(db.executeSql('BEGIN; INSERT INTO exec_probe VALUES (7); SELECT 1 / 0; COMMIT')).rejects.toThrow(
      /division by zero/,
    );
    expect((await db.executeSql('SELECT count(*)::int AS c FROM exec_probe')).rows).toEqual([{ c: 0 }]);
    expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });
});

describe('the runs list on PostgreSQL with 10,000 runs', () => {
  let database: TestDatabase;
  let db: Db;
  beforeAll(async () => {
    database = await createTestDatabase('mt_store_runs_list', { migrated: true });
    // The bulk inserts of 10,000 runs and 20,000 events take more than the default deadline on a loaded machine.
    db = createPgDb(database.url, { timeoutMs: 30_000 });
    await createNamespace(db, 'many');
    // As the console's bench stores them (bench/console.bench.js), not analyzed yet: the planner's guesses.
    await db.query(
      'INSERT INTO mt_runs (id, namespace, interaction, interaction_version, versions, inputs, status, result, created_at) ' +
        "SELECT gen_random_uuid(), 'many', 'flow-' || (i % 3), 1, " +
        "jsonb_build_array(jsonb_build_object('kind', 'agent', 'name', 'agent-' || (i % 3), 'version', 1)), " +
        "jsonb_build_object('message', 'run ' || i), " +
        "(ARRAY['Completed','Failed','Running','PendingApproval'])[1 + i % 4], repeat('result text ', 30), " +
        "date_trunc('milliseconds', now()) - i * interval '1 millisecond' FROM generate_series(1, 10000) AS i",
    );
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  it('reads its first page with statements the planner costs under jit_above_cost (no JIT compile for 51 rows)', async () => {
    const statements: { text: string; params: unknown[] }[] = [];
    const recording = {
      query: (text: string, params: unknown[] = []) => {
        statements.push({ text, params });
        return db.query(text, params);
      },
      exec: (sql: string) => db.exec(sql),
    } as Db;
    const page = await listRunSummaries(recording, 'many', { limit: 51 });
    expect(page).toHaveLength(51);
    const [{ jit_above_cost }] = (await db.query<{ jit_above_cost: string }>('SHOW jit_above_cost')).rows as [
      { jit_above_cost: string },
    ];
    for (const { text, params } of statements) {
      const { rows } = await db.query<{ 'QUERY PLAN': [{ Plan: { 'Total Cost': number } }] }>(
        `EXPLAIN (FORMAT JSON) ${text}`,
        params,
      );
      expect(rows[0]!['QUERY PLAN'][0].Plan['Total Cost']).toBeLessThan(Number(jit_above_cost));
    }
    // The page's PendingApproval runs' approvals are a second statement.
    expect(statements).toHaveLength(2);
  });

  it('filters by a tool the runs called (a common and a rare one) with statements costed under jit_above_cost, as stored and analyzed', async () => {
    // Each run: a model turn, then a call of one of three tools; every 500th run also waits on an approval of `refund`.
    await db.query(
      'INSERT INTO mt_run_events (run_id, seq, type, data) ' +
        "SELECT r.id, s.seq, CASE s.seq WHEN 1 THEN 'model-response' ELSE 'tool-call-started' END, " +
        "CASE s.seq WHEN 1 THEN json_build_object('step', 1) ELSE json_build_object('name', 'tool-' || (r.n % 3)) END " +
        'FROM (SELECT id, row_number() OVER (ORDER BY created_at DESC) AS n FROM mt_runs WHERE namespace = $1) r, ' +
        'generate_series(1, 2) AS s(seq)',
      ['many'],
    );
    await db.query(
      'INSERT INTO mt_run_events (run_id, seq, type, data) ' +
        "SELECT id, 3, 'approval-requested', json_build_object('approval', json_build_object('functionName', 'refund')) " +
        'FROM (SELECT id, row_number() OVER (ORDER BY created_at DESC) AS n FROM mt_runs WHERE namespace = $1) r ' +
        'WHERE n % 500 = 0',
      ['many'],
    );
    const statements: { text: string; params: unknown[] }[] = [];
    const recording = {
      query: (text: string, params: unknown[] = []) => {
        statements.push({ text, params });
        return db.query(text, params);
      },
      exec: (sql: string) => db.exec(sql),
    } as Db;
    const common = await listRunSummaries(recording, 'many', { limit: 51, tool: 'tool-1' });
    expect(common).toHaveLength(51);
    const rare = await listRunSummaries(recording, 'many', { limit: 51, tool: 'refund' });
    expect(rare).toHaveLength(20);
    expect(await listRunSummaries(db, 'many', { limit: 51, tool: 'never-called' })).toEqual([]);
    const [{ jit_above_cost }] = (await db.query<{ jit_above_cost: string }>('SHOW jit_above_cost')).rows as [
      { jit_above_cost: string },
    ];
    // As stored (the planner's guesses: one pass over the events, hashed) and analyzed (the planner's choice with
    // real counts), each statement is costed under jit_above_cost.
    const costs: number[] = [];
    for (const analyzed of [false, true]) {
      if (analyzed) await db.query('ANALYZE mt_runs, mt_run_events');
      for (const { text, params } of statements) {
        const { rows } = await db.query<{ 'QUERY PLAN': [{ Plan: { 'Total Cost': number } }] }>(
          `EXPLAIN (FORMAT JSON) ${text}`,
          params,
        );
        costs.push(rows[0]!['QUERY PLAN'][0].Plan['Total Cost']);
      }
    }
    expect(statements.some((s) => s.text.includes('mt_run_events'))).toBe(true);
    for (const cost of costs) expect(cost).toBeLessThan(Number(jit_above_cost));
  });
});
