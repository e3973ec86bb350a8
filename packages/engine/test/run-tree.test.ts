// A run tree acts as one (#41): a cancel reaches a child being created at that very moment, and a child acts only
// on its tree's authority (the key that started the top run). Real PostgreSQL, a real upstream on 127.0.0.1, the
// scripted model; the engine in this process.
import type { RunningEngine } from '@maitento/engine';
import { createApiKey, type Db, deleteApiKey, type Queryable } from '@maitento/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeWorld, startUpstream, waitFor, type World } from './helpers.js';
import { runTreeRepo, TREE_SCRIPTS } from './run-tree-repo.js';

let world: World;
let upstream: Awaited<ReturnType<typeof startUpstream>>;
const by = { keyId: 'k1', keyName: 'alice', role: 'user' as const };

beforeAll(async () => {
  upstream = await startUpstream(() => ({ body: { ok: true } }));
  world = await makeWorld();
  await world.secret('orders-key', 'sk-orders-123');
  await world.deployFiles(runTreeRepo(upstream.url));
  for (const [name, turns] of Object.entries(TREE_SCRIPTS)) world.script(name, turns);
});
afterAll(async () => {
  await world?.close();
  await upstream?.close();
});

/** The runs of the namespace whose parent is `id`. */
async function childrenOf(engine: RunningEngine, id: string) {
  const { runs } = await engine.listRuns(world.ns, { limit: 200 });
  return runs.filter((r) => r.parentRunId === id);
}

/** Waits until `id` and every run below it have ended (at most `ms`); resolves with their statuses. */
async function treeEnded(engine: RunningEngine, id: string, ms = 10_000): Promise<string[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const top = await engine.getRun(world.ns, id);
    const statuses = [top.status as string];
    const below = [id];
    for (let i = 0; i < below.length; i++) {
      for (const child of await childrenOf(engine, below[i]!)) {
        statuses.push(child.status);
        below.push(child.id);
      }
    }
    if (statuses.every((s) => s === 'Completed' || s === 'Failed' || s === 'Cancelled')) return statuses;
    if (Date.now() > deadline) throw new Error(`tree of ${id} not ended after ${ms} ms: ${statuses.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * The database as the parent's worker sees it, where `during(runId)` runs inside the transaction that creates a
 * child run, `before` or `after` its first statement (the parent's `tool-call-started` naming the child): the
 * cancel the test sends there lands at exactly that moment.
 */
function atChildCreation(db: Db, when: 'before' | 'after', during: () => Promise<unknown>): Db {
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'transaction') {
        return <T>(fn: (tx: Queryable) => Promise<T>): Promise<T> =>
          target.transaction((tx) => {
            let first = true;
            return fn({
              exec: (sql) => tx.exec(sql),
              query: async <R>(text: string, params?: unknown[]) => {
                const creating = first && JSON.stringify(params ?? []).includes('childRunId');
                first = false;
                if (creating && when === 'before') await during();
                const done = await tx.query<R>(text, params);
                // Not awaited: a cancel now waits for this transaction's lock on the parent.
                if (creating && when === 'after') void during();
                return done;
              },
            });
          });
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('a run tree acts as one', { timeout: 60_000 }, () => {
  // Before: the child would look an order up at once (no approval), so a child that escaped the cancel calls the
  // upstream. After: the cancel waits for the parent's lock, then finds the child (which waits for a person).
  for (const [when, name] of [
    ['before', 'lookup-tree'],
    ['after', 'refund-tree'],
  ] as const) {
    it(`a cancel landing ${when} the parent's write that creates its child: no child acts, the tree ends Cancelled`, async () => {
      let parentId = '';
      let cancel: Promise<unknown> = Promise.resolve();
      let cancelledAt = Number.POSITIVE_INFINITY;
      const during = () => {
        cancel = world.engines[0]!.cancelRun(world.ns, parentId).then((view) => {
          cancelledAt = performance.now();
          return view;
        });
        return cancel;
      };
      // The engine that answers the cancel, and the one whose worker runs the tree (its database is the hooked one).
      const api = await world.engine({ worker: undefined });
      const worker = await world.engine({ db: atChildCreation(world.db, when, during) });
      try {
        const seenBefore = upstream.seen.length;
        const arrivals: number[] = [];
        const count = setInterval(() => {
          while (arrivals.length < upstream.seen.length - seenBefore) arrivals.push(performance.now());
        }, 1);
        const run = await worker.startRun(world.ns, name, { inputs: { message: 'where is SLOW-1?' } });
        parentId = run.id;
        const statuses = await treeEnded(api, run.id);
        await cancel;
        // Whatever a child might still do once the tree has ended had time to reach the upstream.
        await new Promise((resolve) => setTimeout(resolve, 500));
        clearInterval(count);
        expect(statuses.every((s) => s === 'Cancelled')).toBe(true);
        expect(statuses[0]).toBe('Cancelled');
        // No upstream call after the cancel was answered (the child's lookup would be one).
        expect(arrivals.filter((at) => at > cancelledAt)).toEqual([]);
        expect(upstream.seen.length - seenBefore).toBe(0);
      } finally {
        await worker.close();
        await api.close();
        world.engines.splice(0);
      }
    });
  }

  it("a child acts on the authority of the key that started its tree: the key deleted, neither the child's approved refund nor the lookup it then makes is sent", async () => {
    const engine = await world.engine();
    try {
      const key = await createApiKey(world.db, world.ns, { role: 'user', name: 'tree-key' });
      const seenBefore = upstream.seen.length;
      const run = await engine.startRun(
        world.ns,
        'refund-tree',
        { inputs: { message: 'refund A-1001' } },
        { keyId: key.id },
      );
      const waiting = await waitFor(engine, world.ns, run.id, (r) => r.status === 'PendingApproval');
      const childId = waiting.pendingApproval!.runId!;
      expect(childId).not.toBe(run.id);
      await deleteApiKey(world.db, world.ns, key.id);
      await engine.answerRunApproval(world.ns, run.id, undefined, { decision: 'approve', by });
      const done = await waitFor(engine, world.ns, run.id);
      expect(done.status).toBe('Completed');
      // Nothing sent: the child's approved refund was refused as the top run's would be, and so was the lookup it
      // then makes without asking anyone.
      expect(upstream.seen.slice(seenBefore)).toEqual([]);
      const childEvents = await engine.listEvents(world.ns, childId);
      const results = childEvents.filter((e) => e.type === 'tool-result').map((e) => e.data);
      expect(results).toEqual([
        expect.objectContaining({ name: 'refund-order', ok: false, code: 'api:calls:key-deleted' }),
        expect.objectContaining({ name: 'get-order', ok: false, code: 'api:calls:key-deleted' }),
      ]);
    } finally {
      await engine.close();
      world.engines.splice(0);
    }
  });
});
