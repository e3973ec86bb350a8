import { randomUUID } from 'node:crypto';
import { claimRun, createNamespace, createPgDb, type Db, findRun, insertRun, migrate } from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCancelled, runFailed, runStarted, runWaiting, toolCallStarted } from './events.js';
import { AttemptJournal, appendToRun, ClaimLost, readEvents } from './journal.js';

const NS = 'journal';
let database: TestDatabase;
let db: Db;

// A stored Running run, claimed by `claim`, and that attempt's journal.
async function claimedRun(claim: string): Promise<{ id: string; journal: AttemptJournal }> {
  const id = randomUUID();
  const started = runStarted({
    interaction: { name: 'support', version: 1 },
    versions: [],
    inputs: {},
    interactive: true,
  });
  await insertRun(
    db,
    { id, namespace: NS, interaction: 'support', interactionVersion: 1, versions: [], inputs: {}, interactive: true },
    started,
  );
  const claimed = await claimRun(db, id, claim);
  return { id, journal: new AttemptJournal(db, id, claim, claimed!.events) };
}

beforeAll(async () => {
  database = await createTestDatabase('mt_engine_journal', { migrated: true });
  db = createPgDb(database.url);
  await migrate(db);
  await createNamespace(db, NS);
});

afterAll(async () => {
  await db?.close();
  await database?.drop();
});

describe('the journal guard', () => {
  it('refuses a write by a stale claim: ClaimLost, and nothing is stored', async () => {
    const { id, journal } = await claimedRun('worker-a/1');
    // The job was retried elsewhere: a later attempt claims the run.
    await claimRun(db, id, 'worker-b/2');
    await expect(journal.append([toolCallStarted({ id: 'call_0', index: 0, name: 'lookup' })])).rejects.toBeInstanceOf(
      ClaimLost,
    );
    expect((await readEvents(db, id)).map((e) => e.type)).toEqual(['run-started']);
    expect(await findRun(db, id)).toMatchObject({ status: 'Running', lastSeq: 1 });
  });

  it('an expected-seq write resolves false when an event came in between, and the next read has that event', async () => {
    const { id, journal } = await claimedRun('worker-a/1');
    expect((await journal.events()).map((e) => e.seq)).toEqual([1]);
    const seq = journal.ownSeq;
    expect(seq).toBe(1);
    // Someone else (an answer, here any writer while the run is Running) appends after the attempt read seq 1.
    expect(await appendToRun(db, id, ['Running'], [toolCallStarted({ id: 'c', index: 0, name: 'x' })])).toBe(2);
    expect(await journal.append([runWaiting(['c'])], seq)).toBe(false);
    expect(await findRun(db, id)).toMatchObject({ status: 'Running', claim: 'worker-a/1', lastSeq: 2 });
    expect((await journal.events()).map((e) => e.type)).toEqual(['run-started', 'tool-call-started']);
    // With the seq as it now stands, the same write goes through and sets the status its event implies.
    expect(journal.ownSeq).toBe(2);
    expect(await journal.append([runWaiting(['c'])], journal.ownSeq)).toMatchObject({ seq: 3 });
    expect(await findRun(db, id)).toMatchObject({ status: 'PendingApproval', lastSeq: 3 });
  });

  it("counts only this attempt's own appends: an append by someone else between two of its own is seen", async () => {
    const { id, journal } = await claimedRun('worker-a/1');
    await journal.events();
    expect(await journal.append([toolCallStarted({ id: 'c', index: 0, name: 'x' })])).toMatchObject({ seq: 2 });
    expect(await appendToRun(db, id, ['Running'], [toolCallStarted({ id: 'd', index: 1, name: 'x' })])).toBe(3);
    // Joined to a transaction, as an approval-requested is: its seq is not compared with what the attempt knows.
    await db.transaction((tx) => journal.append([toolCallStarted({ id: 'e', index: 2, name: 'x' })], undefined, tx));
    expect(journal.ownSeq).toBe(3);
    expect(await journal.append([runWaiting(['e'])], journal.ownSeq)).toBe(false);
    expect(await findRun(db, id)).toMatchObject({ status: 'Running', lastSeq: 4 });
  });

  it('an append resolves with the cache epoch its own statement read, a cache write before it included', async () => {
    const { journal } = await claimedRun('worker-a/1');
    const epoch = async () =>
      BigInt((await db.query<{ epoch: string }>('SELECT epoch::text AS epoch FROM mt_cache_epoch')).rows[0]!.epoch);
    const before = await epoch();
    // A statement that changes a cached table (here: secrets, none matched) steps the epoch.
    await db.query("UPDATE mt_secrets SET namespace = namespace WHERE namespace = 'none'");
    const stepped = await epoch();
    expect(stepped).toBeGreaterThan(before);
    expect(await journal.append([toolCallStarted({ id: 'c', index: 0, name: 'x' })])).toEqual({
      seq: 2,
      epoch: stepped,
    });
  });

  it('writes the status the last event implies, and a status guard refuses a run that left those statuses', async () => {
    const { id, journal } = await claimedRun('worker-a/1');
    expect(await journal.append([runFailed({ code: 'api:runs:too-many-steps', message: 'too many' })])).toMatchObject({
      seq: 2,
    });
    expect(await findRun(db, id)).toMatchObject({
      status: 'Failed',
      errorCode: 'api:runs:too-many-steps',
      errorMessage: 'too many',
    });
    expect(await appendToRun(db, id, ['PendingApproval', 'Running'], [runCancelled()])).toBe(false);
    const events = await readEvents(db, id);
    expect(events.map((e) => e.type)).toEqual(['run-started', 'run-failed']);
    const last = events[1]!;
    // Readers narrow on the union: a run-failed's data is its error.
    if (last.type !== 'run-failed') throw new Error('expected run-failed');
    expect(last.data.code).toBe('api:runs:too-many-steps');
  });
});
