import { randomUUID } from 'node:crypto';
import {
  answerApprovalRecord,
  appendRunEvents,
  cancelRequested,
  claimRun,
  createNamespace,
  createPgDb,
  createPgliteDb,
  type Db,
  expireApprovals,
  findApproval,
  findRun,
  insertApproval,
  insertRun,
  listRunEvents,
  listRunSummaries,
  migrate,
  requestCancel,
} from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

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

const backends: [string, () => Promise<{ db: Db; done(): Promise<void> }>][] = [
  [
    'PostgreSQL',
    async () => {
      const database: TestDatabase = await createTestDatabase('mt_store_runs', { migrated: true });
      const db = createPgDb(database.url);
      return {
        db,
        async done() {
          await db.close();
          await database.drop();
        },
      };
    },
  ],
  [
    'PGlite',
    async () => {
      const db = await createPgliteDb();
      return { db, done: () => db.close() };
    },
  ],
];

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
