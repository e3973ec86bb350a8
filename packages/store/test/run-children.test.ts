import { randomUUID } from 'node:crypto';
import {
  createNamespace,
  createPgDb,
  createPgliteDb,
  type Db,
  findChildRun,
  findRun,
  followDescendant,
  insertApproval,
  insertRun,
  loadMigrations,
  lockRunLine,
  migrate,
  openChildren,
  openDescendants,
  runTree,
  treeApprovals,
  treeStartedBy,
} from '@maitento/store';
import { createTestDatabase, databaseDrivers, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const NS = 'children';

// Child runs (agents as tools, schema 15): a call's child is found by the call's identity, at most one; ancestors
// follow a descendant that waits for a person.
describe.each(databaseDrivers('mt_store_children', { pg: createPgDb, pglite: createPgliteDb }))(
  'child runs on %s',
  (_name, open) => {
    let db: Db;
    let done: () => Promise<void>;

    beforeAll(async () => {
      ({ db, done } = await open());
      await migrate(db);
      await createNamespace(db, NS);
    });
    afterAll(async () => {
      await done?.();
    });

    async function run(parent?: { id: string; step: number; index: number; depth: number }): Promise<string> {
      const id = randomUUID();
      await insertRun(
        db,
        {
          id,
          namespace: NS,
          interaction: 'triage',
          interactionVersion: 1,
          versions: [],
          inputs: {},
          interactive: true,
          child: parent && {
            parentRunId: parent.id,
            step: parent.step,
            index: parent.index,
            agent: 'billing-agent',
            depth: parent.depth,
          },
        },
        { type: 'run-started', data: {} },
      );
      return id;
    }

    const status = async (id: string) => (await findRun(db, id))?.status;
    const setStatus = (id: string, value: string) =>
      db.query('UPDATE mt_runs SET status = $2 WHERE id = $1', [id, value]);
    const approval = (runId: string) =>
      insertApproval(db, {
        id: randomUUID(),
        namespace: NS,
        runId,
        toolCallId: 'c',
        step: 1,
        callIndex: 0,
        functionName: 'refund-order',
        argumentsJson: '{}',
        requestHash: 'h',
      });

    it("stores the link, finds a call's child by its identity, and refuses a second child for the same call", async () => {
      const top = await run();
      const child = await run({ id: top, step: 2, index: 1, depth: 1 });
      const found = await findChildRun(db, top, 2, 1);
      expect(found).toMatchObject({
        id: child,
        parentRunId: top,
        parentCall: { step: 2, index: 1 },
        agent: 'billing-agent',
        depth: 1,
      });
      expect(await findChildRun(db, top, 2, 0)).toBeUndefined();
      await expect(run({ id: top, step: 2, index: 1, depth: 1 })).rejects.toThrow();
      expect(await findRun(db, top)).toMatchObject({ parentRunId: null, parentCall: null, agent: null, depth: 0 });
    });

    it('makes Running ancestors PendingApproval while a descendant waits, and Running again after, unless one waits itself', async () => {
      const top = await run();
      const middle = await run({ id: top, step: 1, index: 0, depth: 1 });
      const leaf = await run({ id: middle, step: 1, index: 0, depth: 2 });
      expect(await runTree(db, top)).toHaveLength(3);
      expect(await openDescendants(db, top)).toEqual([middle, leaf]);

      await setStatus(leaf, 'PendingApproval');
      const leafApproval = await approval(leaf);
      expect(await followDescendant(db, leaf, 'PendingApproval')).toBe(middle);
      expect([await status(top), await status(middle)]).toEqual(['PendingApproval', 'PendingApproval']);
      expect((await treeApprovals(db, top)).map((a) => a.id)).toEqual([leafApproval.id]);

      // The top run waits on an approval of its own: it stays PendingApproval when the leaf goes on.
      await approval(top);
      await setStatus(leaf, 'Running');
      expect(await followDescendant(db, leaf, 'Running')).toBe(middle);
      expect([await status(top), await status(middle)]).toEqual(['PendingApproval', 'Running']);

      await setStatus(leaf, 'Completed');
      expect(await followDescendant(db, leaf, 'Completed')).toBe(middle);
      expect(await openDescendants(db, top)).toEqual([middle]);
      expect(await followDescendant(db, top, 'Running')).toBeNull();
    });
  },
);

// The key that started a tree (schema 19): every run of the tree acts on it.
describe('the key of a run tree', () => {
  let database: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    database = await createTestDatabase('mt_store_tree_key');
    db = createPgDb(database.url);
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  // Stored as a worker of the schema before version 19 stored them: a plain INSERT of that schema's columns (the
  // store's insertRun writes the columns of today's schema, which the old one lacks).
  const add = async (startedByKeyId?: string, parent?: { id: string; depth: number }) => {
    const id = randomUUID();
    await db.query(
      'INSERT INTO mt_runs (id, namespace, interaction, interaction_version, versions, inputs, interactive, status, ' +
        "started_by_key_id, last_seq, parent_run_id, parent_step, parent_call_index, agent, depth) VALUES ($1, $2, 'triage', 1, " +
        "'[]'::jsonb, '{}'::jsonb, true, 'Running', $3, 1, $4, $5, $6, $7, $8)",
      [
        id,
        NS,
        startedByKeyId ?? null,
        parent?.id ?? null,
        parent ? 1 : null,
        parent ? 0 : null,
        parent ? 'billing-agent' : null,
        parent?.depth ?? 0,
      ],
    );
    return id;
  };

  it('schema 19 gives children stored before it their top run key; treeStartedBy reads it; openChildren and lockRunLine see the tree', async () => {
    // The schema as it was before version 19, with a tree whose children have no key (as workers stored them).
    await migrate(
      db,
      loadMigrations().filter((m) => m.version < 19),
    );
    await createNamespace(db, NS);
    const key = randomUUID();
    const top = await add(key);
    const middle = await add(undefined, { id: top, depth: 1 });
    const leaf = await add(undefined, { id: middle, depth: 2 });
    const keyless = await add();
    const keylessChild = await add(undefined, { id: keyless, depth: 1 });
    expect(await treeStartedBy(db, leaf)).toBe(key);
    expect(await treeStartedBy(db, keylessChild)).toBeNull();

    expect(await migrate(db)).toContain(19);
    const keys = async (...ids: string[]) =>
      Promise.all(ids.map(async (id) => (await findRun(db, id))?.startedByKeyId));
    expect(await keys(top, middle, leaf, keyless, keylessChild)).toEqual([key, key, key, null, null]);

    expect(await openChildren(db, top)).toEqual([middle]);
    await db.query("UPDATE mt_runs SET status = 'Completed' WHERE id = $1", [leaf]);
    expect(await openChildren(db, middle)).toEqual([]);
    // The locks of a run and its ancestors, taken in one statement: another connection cannot take them meanwhile,
    // and a run outside the line stays free.
    const other = createPgDb(database.url);
    const lockable = (id: string) =>
      other.query('SELECT 1 FROM mt_runs WHERE id = $1 FOR UPDATE NOWAIT', [id]).then(
        () => true,
        () => false,
      );
    try {
      await db.transaction(async (tx) => {
        await lockRunLine(tx, leaf);
        expect(await Promise.all([top, middle, leaf, keyless].map(lockable))).toEqual([false, false, false, true]);
      });
      expect(await lockable(top)).toBe(true);
    } finally {
      await other.close();
    }
  });
});
