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
  migrate,
  openDescendants,
  runTree,
  treeApprovals,
} from '@maitento/store';
import { databaseDrivers } from '@maitento/testkit';
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
