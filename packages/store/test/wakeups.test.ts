// The wake-up channel (packages/store/src/wake): notifications by topic, sent at commit by the writers, on a real
// PostgreSQL database and on PGlite; and a LISTEN connection that stalls behind a TCP proxy.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  answerApprovalRecord,
  appendRunEvents,
  createApiKey,
  createNamespace,
  createPgDb,
  createPgliteDb,
  type Db,
  deleteApiKey,
  expireApprovals,
  findRun,
  insertApproval,
  insertRun,
  migrate,
  notifyWake,
  openWakeups,
  requestCancel,
  type Wakeups,
  watchRun,
} from '@maitento/store';
import { copyPgliteTemplate, createTestDatabase, startTcpProxy, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let database: TestDatabase;
let db: Db;
const opened: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  database = await createTestDatabase('mt_wakeups', { migrated: true });
  db = createPgDb(database.url);
  await migrate(db);
  await createNamespace(db, 'wake');
});

afterAll(async () => {
  for (const item of opened.reverse()) await item.close();
  await db?.close();
  await database?.drop();
});

async function wakeups(on: Db, options: Parameters<typeof openWakeups>[1] = {}): Promise<Wakeups> {
  const made = await openWakeups(on, options);
  opened.push(made);
  return made;
}

/** Resolves when `topic` is woken, rejects after `ms`. */
function woken(w: Wakeups, topic: string, ms = 2000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`${topic} was not woken within ${ms} ms`));
    }, ms);
    const off = w.on(topic, () => {
      clearTimeout(timer);
      off();
      resolve();
    });
  });
}

async function until(check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not true within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function newRun(on: Db, id = randomUUID()): Promise<string> {
  await insertRun(
    on,
    {
      id,
      namespace: 'wake',
      interaction: 'support',
      interactionVersion: 1,
      versions: [],
      inputs: {},
      interactive: true,
    },
    { type: 'run-started', data: {} },
  );
  return id;
}

describe('wake-ups on PostgreSQL', () => {
  it('delivers a topic to its subscribers at commit, not on rollback, and not to other topics', async () => {
    const w = await wakeups(db);
    expect(w.listening).toBe(true);
    const seen: string[] = [];
    const offA = w.on('a', () => seen.push('a'));
    w.on('b', () => seen.push('b'));
    await expect(
      db.transaction(async (tx) => {
        await notifyWake(tx, 'a');
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    const a = woken(w, 'a');
    await db.transaction((tx) => notifyWake(tx, 'a'));
    await a;
    // Notifications arrive in commit order: once a later one is here, an earlier `b` would have been too.
    const later = woken(w, 'later');
    await db.transaction((tx) => notifyWake(tx, 'later'));
    await later;
    expect(seen).toEqual(['a']);
    offA();
    const b = woken(w, 'b');
    await db.transaction(async (tx) => {
      await notifyWake(tx, 'a');
      await notifyWake(tx, 'b');
    });
    await b;
    expect(seen).toEqual(['a', 'b']);
  });

  it('the writers wake runs, run:<id> (while watched), approval:<id> and key:<id> in the statement that makes the change', async () => {
    const w = await wakeups(db);
    const runId = randomUUID();
    const inserted = Promise.all([woken(w, `run:${runId}`), woken(w, 'runs')]);
    await newRun(db, runId);
    // The insert's own wake-ups first, so that the next one is the append's.
    await inserted;
    // Unwatched: the append wakes nobody. Notifications arrive in commit order, so once `later` (committed after the
    // append) is here, the append's `run:<id>` would have been too.
    const seen: string[] = [];
    const offRun = w.on(`run:${runId}`, () => seen.push('run'));
    expect(await appendRunEvents(db, runId, { statuses: ['Running'] }, [{ type: 'x', data: {} }])).toMatchObject({
      seq: 2,
    });
    const later = woken(w, 'later');
    await db.transaction((tx) => notifyWake(tx, 'later'));
    await later;
    expect(seen).toEqual([]);
    // Watched (a stream's mark): the append wakes `run:<id>` at its commit; the mark does not touch updated_at.
    const before = await findRun(db, runId, 'wake');
    await watchRun(db, runId);
    expect((await findRun(db, runId, 'wake'))?.updatedAt).toBe(before?.updatedAt);
    const appended = woken(w, `run:${runId}`);
    expect(await appendRunEvents(db, runId, { statuses: ['Running'] }, [{ type: 'x', data: {} }])).toMatchObject({
      seq: 3,
    });
    await appended;
    offRun();
    expect(seen).toEqual(['run']);
    const cancelled = woken(w, `cancel:${runId}`);
    expect(await requestCancel(db, 'wake', runId)).toBeDefined();
    await cancelled;

    const approval = (id: string) =>
      insertApproval(db, {
        id,
        namespace: 'wake',
        runId,
        toolCallId: `call-${id}`,
        functionName: 'refund-order',
        argumentsJson: '{}',
        requestHash: 'h',
      });
    const answeredId = randomUUID();
    await approval(answeredId);
    const answered = woken(w, `approval:${answeredId}`);
    const answer = { status: 'Approved' as const, reason: null, keyId: 'k', keyName: 'n' };
    expect((await answerApprovalRecord(db, 'wake', answeredId, answer))?.status).toBe('Approved');
    await answered;
    const expiredId = randomUUID();
    await approval(expiredId);
    const expired = woken(w, `approval:${expiredId}`);
    expect((await expireApprovals(db, { id: expiredId })).map((a) => a.status)).toEqual(['Expired']);
    await expired;

    const key = await createApiKey(db, 'wake', { role: 'user' });
    const deleted = woken(w, `key:${key.id}`);
    await deleteApiKey(db, 'wake', key.id);
    await deleted;
  });

  it('a stalled LISTEN connection is dropped within its deadline: listening turns false, is logged once, and comes back', async () => {
    const proxy = await startTcpProxy();
    opened.push(proxy);
    const logged: string[] = [];
    const logger = {
      info: (_: object, msg: string) => logged.push(`info ${msg}`),
      warn: (_: object, msg: string) => logged.push(`warn ${msg}`),
    };
    const w = await wakeups(db, {
      url: proxy.via(database.url),
      pingMs: 100,
      deadlineMs: 300,
      retryMs: 100,
      logger,
    });
    expect(w.listening).toBe(true);
    let wakes = 0;
    w.on('stall', () => wakes++);
    proxy.freeze();
    await until(() => !w.listening, 2000);
    // Reconnect attempts fail while frozen; the loss is told once.
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(w.listening).toBe(false);
    expect(logged.filter((line) => line.startsWith('warn'))).toHaveLength(1);
    // A change made meanwhile is missed; its subscriber is woken once the connection is back.
    await db.transaction((tx) => notifyWake(tx, 'stall'));
    proxy.thaw();
    await until(() => w.listening, 3000);
    await until(() => wakes >= 1, 1000);
    expect(logged.filter((line) => line.startsWith('info'))).toHaveLength(1);
  });
});

describe('wake-ups on PGlite', () => {
  it('delivers in-process after the transaction commits, not on rollback; a writer wakes its topic', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mt-wake-pglite-'));
    await copyPgliteTemplate(dir);
    const lite = await createPgliteDb(dir);
    try {
      const w = await openWakeups(lite);
      expect(w.listening).toBe(true);
      const seen: string[] = [];
      w.on('t', () => seen.push('t'));
      await lite
        .transaction(async (tx) => {
          await notifyWake(tx, 't');
          throw new Error('no');
        })
        .catch(() => undefined);
      await lite.transaction(async (tx) => {
        await notifyWake(tx, 't');
        expect(seen).toEqual([]);
      });
      expect(seen).toEqual(['t']);
      // A subscriber runs in its own async context, not in the writer's (a request holding an Idempotency-Key).
      const request = new AsyncLocalStorage<string>();
      const contexts: (string | undefined)[] = [];
      w.on('ctx', () => contexts.push(request.getStore()));
      await request.run('the writer', () => lite.transaction((tx) => notifyWake(tx, 'ctx')));
      expect(contexts).toEqual([undefined]);
      await migrate(lite);
      await createNamespace(lite, 'wake');
      const key = await createApiKey(lite, 'wake', { role: 'user' });
      const deleted = woken(w, `key:${key.id}`);
      await deleteApiKey(lite, 'wake', key.id);
      await deleted;
      await w.close();
    } finally {
      await lite.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
