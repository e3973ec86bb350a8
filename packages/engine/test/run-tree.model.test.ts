// Model-based tests of the run-tree state machine (#41), with fast-check: generated sequences of start, approve,
// reject, cancel, key delete, disable/enable, worker restart and two races (a cancel right after the start, while the
// tree is being created; an approve and a cancel at once), driven against the engine in this process on a real
// PostgreSQL database, a real upstream on 127.0.0.1 and the scripted model. After every command the invariant is
// checked: no upstream call after the tree was cancelled or its authority (its key, the tool's version) was gone,
// and no call made twice. Each tree asks a person from a child (or a grandchild) about a refund, then looks the
// order up at once, so no call is made without an answer: the model knows exactly which calls may have been made.
//
// MT_FC_SEED=<seed> (and MT_FC_PATH=<path>) replays a failure fast-check printed; MT_FC_RUNS sets how many sequences
// (200 by default); MT_FC_TIMES=1 prints each command's time.
import type { RunningEngine, RunView } from '@maitento/engine';
import { createApiKey, deleteApiKey, openWakeups, runTree, setVersionEnabled, type Wakeups } from '@maitento/store';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeWorld, startUpstream, type World } from './helpers.js';
import { runTreeRepo, TREE_SCRIPTS } from './run-tree-repo.js';

let world: World;
let upstream: Awaited<ReturnType<typeof startUpstream>>;
let refundVersion = 0;
// The process's wake-ups, as `mt serve` has them: a cancel reaches the worker holding a run at once.
let wakeups: Wakeups;
const by = { keyId: 'k1', keyName: 'alice', role: 'user' as const };
const ENDED = ['Completed', 'Failed', 'Cancelled'];
const KINDS = ['refund-tree', 'refund-deep'] as const;

beforeAll(async () => {
  upstream = await startUpstream(() => ({ body: { refunded: true } }));
  world = await makeWorld();
  await world.secret('orders-key', 'sk-orders-123');
  await world.deployFiles(runTreeRepo(upstream.url));
  for (const [name, turns] of Object.entries(TREE_SCRIPTS)) world.script(name, turns);
  const { rows } = await world.db.query<{ version: number }>(
    "SELECT version FROM mt_resource_versions WHERE namespace = $1 AND kind = 'tool' AND name = 'refund-order'",
    [world.ns],
  );
  refundVersion = rows[0]!.version;
  wakeups = await openWakeups(world.db);
});
afterAll(async () => {
  await wakeups?.close();
  await world?.close();
  await upstream?.close();
});

/** One tree as the model knows it. */
interface TreeModel {
  /** Waiting for a person (its deepest run asks), or ended. */
  state: 'waiting' | 'ended';
  keyDeleted: boolean;
  /** The upstream calls its runs made: at most two (its approved refund, then a lookup made at once). */
  calls: number;
}

interface Model {
  trees: TreeModel[];
  /** Whether the refund tool's version is disabled now. */
  disabled: boolean;
  restarts: number;
}

/** One tree as the test drives it. */
interface RealTree {
  topId: string;
  /** The run that asks (the child, or the grandchild of a deep tree). */
  askerId: string;
  approvalId: string;
  keyId: string;
}

interface Real {
  engine: RunningEngine;
  trees: RealTree[];
  /** The calls the upstream had received when the sequence began. */
  before: number;
}

/** The calls the upstream received so far (a tree's refund, and the lookup its asker makes after it). */
function received(): number {
  return upstream.seen.length;
}

/** The statuses of every run of the tree under `topId`, top first. */
async function statuses(topId: string): Promise<string[]> {
  const ids = await runTree(world.db, topId);
  const { rows } = await world.db.query<{ id: string; status: string }>(
    'SELECT id, status FROM mt_runs WHERE id = ANY($1::uuid[])',
    [ids],
  );
  return ids.map((id) => rows.find((r) => r.id === id)!.status);
}

/** Polls until `done` holds of the tree's statuses, at most 10 s. */
async function settle(topId: string, done: (s: string[]) => boolean, what: string): Promise<string[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const now = await statuses(topId);
    if (done(now)) return now;
    if (Date.now() > deadline) throw new Error(`tree ${topId} not ${what} after 10 s: ${now.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const allEnded = (s: string[]) => s.every((status) => ENDED.includes(status));

/**
 * The invariant after every command: the upstream received exactly the calls the model allows (a call made after a
 * tree was cancelled or lost its authority, now or later, shows here), and no call twice (its Idempotency-Key).
 */
function checkInvariant(m: Model, r: Real): void {
  const allowed = m.trees.reduce((sum, tree) => sum + tree.calls, 0);
  expect(received() - r.before, 'calls received in this sequence').toBe(allowed);
  // Only a POST has an Idempotency-Key (derived from the call's identity: run, turn, index).
  const keys = upstream.seen.filter((s) => s.method === 'POST').map((s) => String(s.headers['idempotency-key']));
  expect(new Set(keys).size, 'an upstream call made twice').toBe(keys.length);
}

/** What the asker's calls got as their results, in order. */
async function askerResults(r: Real, tree: RealTree): Promise<{ ok: unknown; code: unknown }[]> {
  const events = await r.engine.listEvents(world.ns, tree.askerId);
  return events.filter((e) => e.type === 'tool-result').map((e) => e.data as { ok: unknown; code: unknown });
}

async function startTree(r: Real, kind: (typeof KINDS)[number]): Promise<{ tree: RealTree; view: RunView }> {
  const key = await createApiKey(world.db, world.ns, { role: 'user', name: 'tree' });
  const view = await r.engine.startRun(world.ns, kind, { inputs: { message: 'refund A-1001' } }, { keyId: key.id });
  return { tree: { topId: view.id, askerId: '', approvalId: '', keyId: key.id }, view };
}

/** The deepest run of the tree (the one that asks). */
async function deepest(topId: string): Promise<string> {
  const { rows } = await world.db.query<{ id: string }>(
    'SELECT id FROM mt_runs WHERE id = ANY($1::uuid[]) ORDER BY depth DESC LIMIT 1',
    [await runTree(world.db, topId)],
  );
  return rows[0]!.id;
}

class Start implements fc.AsyncCommand<Model, Real> {
  constructor(readonly kind: (typeof KINDS)[number]) {}
  check = (m: Readonly<Model>) => m.trees.length < 3;
  async run(m: Model, r: Real) {
    const { tree } = await startTree(r, this.kind);
    if (m.disabled) {
      // Nobody is asked about a call of a disabled version: its result says so at once, and the tree goes on.
      expect((await settle(tree.topId, allEnded, 'ended'))[0]).toBe('Completed');
      tree.askerId = await deepest(tree.topId);
      const [refund, lookup] = await askerResults(r, tree);
      expect(refund).toMatchObject({ ok: false, code: 'api:extops:version-disabled' });
      expect(lookup).toMatchObject({ ok: true });
      r.trees.push(tree);
      m.trees.push({ state: 'ended', keyDeleted: false, calls: 1 });
      return checkInvariant(m, r);
    }
    await settle(tree.topId, (s) => s[0] === 'PendingApproval', 'waiting');
    const view = await r.engine.getRun(world.ns, tree.topId);
    tree.askerId = view.pendingApproval!.runId!;
    tree.approvalId = view.pendingApproval!.id;
    expect(tree.askerId).not.toBe(tree.topId);
    r.trees.push(tree);
    m.trees.push({ state: 'waiting', keyDeleted: false, calls: 0 });
    checkInvariant(m, r);
  }
  toString = () => `Start(${this.kind})`;
}

/** A command on the tree at `i % trees`. */
abstract class OnTree implements fc.AsyncCommand<Model, Real> {
  constructor(readonly i: number) {}
  check(m: Readonly<Model>) {
    return m.trees.length > 0;
  }
  pick(m: Model, r: Real): [TreeModel, RealTree] {
    const at = this.i % m.trees.length;
    return [m.trees[at]!, r.trees[at]!];
  }
  abstract run(m: Model, r: Real): Promise<void>;
  toString = () => `${this.constructor.name}(${this.i})`;
}

class Approve extends OnTree {
  async run(m: Model, r: Real) {
    const [tree, real] = this.pick(m, r);
    const answer = r.engine.answerRunApproval(world.ns, real.topId, real.approvalId, { decision: 'approve', by });
    if (tree.state === 'ended') {
      await expect(answer).rejects.toMatchObject({ code: expect.stringMatching(/^api:(approvals|runs):/) });
      return checkInvariant(m, r);
    }
    await answer;
    const now = await settle(real.topId, allEnded, 'ended');
    expect(now[0]).toBe('Completed');
    const [refund, lookup] = await askerResults(r, real);
    if (m.disabled) expect(refund).toMatchObject({ ok: false, code: 'api:extops:version-disabled' });
    else if (tree.keyDeleted) expect(refund).toMatchObject({ ok: false, code: 'api:calls:key-deleted' });
    else expect(refund).toMatchObject({ ok: true });
    // The lookup (its own tool, not disabled) is made on the tree's key too.
    expect(lookup).toMatchObject(tree.keyDeleted ? { ok: false, code: 'api:calls:key-deleted' } : { ok: true });
    tree.calls = (m.disabled || tree.keyDeleted ? 0 : 1) + (tree.keyDeleted ? 0 : 1);
    tree.state = 'ended';
    checkInvariant(m, r);
  }
}

class Reject extends OnTree {
  async run(m: Model, r: Real) {
    const [tree, real] = this.pick(m, r);
    const answer = r.engine.answerRunApproval(world.ns, real.topId, real.approvalId, {
      decision: 'reject',
      reason: 'not this one',
      by,
    });
    if (tree.state === 'ended') {
      await expect(answer).rejects.toMatchObject({ code: expect.stringMatching(/^api:(approvals|runs):/) });
      return checkInvariant(m, r);
    }
    await answer;
    const now = await settle(real.topId, allEnded, 'ended');
    expect(now[0]).toBe('Completed');
    const [refund, lookup] = await askerResults(r, real);
    expect(refund).toMatchObject({ ok: false, code: 'api:approvals:rejected' });
    expect(lookup).toMatchObject(tree.keyDeleted ? { ok: false, code: 'api:calls:key-deleted' } : { ok: true });
    tree.calls = tree.keyDeleted ? 0 : 1;
    tree.state = 'ended';
    checkInvariant(m, r);
  }
}

class Cancel extends OnTree {
  async run(m: Model, r: Real) {
    const [tree, real] = this.pick(m, r);
    const cancel = r.engine.cancelRun(world.ns, real.topId);
    if (tree.state === 'ended') {
      await expect(cancel).rejects.toMatchObject({ code: 'api:runs:already-ended' });
      return checkInvariant(m, r);
    }
    await cancel;
    // Every run of the tree, at once (a waiting tree has no worker): Cancelled, and its approval Expired.
    expect(await statuses(real.topId)).toEqual((await runTree(world.db, real.topId)).map(() => 'Cancelled'));
    expect((await r.engine.getApproval(world.ns, real.approvalId)).status).toBe('Expired');
    tree.state = 'ended';
    checkInvariant(m, r);
  }
}

class DeleteKey extends OnTree {
  check(m: Readonly<Model>) {
    return m.trees.some((t) => !t.keyDeleted);
  }
  async run(m: Model, r: Real) {
    const [tree, real] = this.pick(m, r);
    if (tree.keyDeleted) return;
    await deleteApiKey(world.db, world.ns, real.keyId);
    tree.keyDeleted = true;
    checkInvariant(m, r);
  }
}

class SetDisabled implements fc.AsyncCommand<Model, Real> {
  constructor(readonly disabled: boolean) {}
  check = (m: Readonly<Model>) => m.disabled !== this.disabled;
  async run(m: Model, r: Real) {
    await setVersionEnabled(world.db, world.ns, 'tool', 'refund-order', refundVersion, !this.disabled);
    m.disabled = this.disabled;
    checkInvariant(m, r);
  }
  toString = () => (this.disabled ? 'Disable' : 'Enable');
}

/** The worker stopped (as `mt worker` on SIGTERM) and another started: waiting trees go on with it. */
class RestartWorker implements fc.AsyncCommand<Model, Real> {
  check = (m: Readonly<Model>) => m.restarts < 1;
  async run(m: Model, r: Real) {
    const old = r.engine;
    await old.close();
    world.engines.splice(world.engines.indexOf(old), 1);
    r.engine = await world.engine({ wakeups });
    m.restarts++;
    checkInvariant(m, r);
  }
  toString = () => 'RestartWorker';
}

/** Race: the cancel sent right after the start, while the tree's runs are being created. */
class StartThenCancel implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly kind: (typeof KINDS)[number],
    readonly delayMs: number,
  ) {}
  check = (m: Readonly<Model>) => m.trees.length < 3 && !m.disabled;
  async run(m: Model, r: Real) {
    const { tree } = await startTree(r, this.kind);
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    await r.engine.cancelRun(world.ns, tree.topId);
    // No run of the tree escapes: every one ends Cancelled (none can end otherwise: the refund waits for a person).
    const now = await settle(tree.topId, allEnded, 'ended');
    expect(now).toEqual(now.map(() => 'Cancelled'));
    tree.askerId = await deepest(tree.topId);
    r.trees.push(tree);
    m.trees.push({ state: 'ended', keyDeleted: false, calls: 0 });
    checkInvariant(m, r);
  }
  toString = () => `StartThenCancel(${this.kind}, ${this.delayMs})`;
}

/** Race: a person approves while another cancels. At most one call, and none without the tree's authority. */
class ApproveAndCancel extends OnTree {
  async run(m: Model, r: Real) {
    const [tree, real] = this.pick(m, r);
    const [approved, cancelled] = await Promise.allSettled([
      r.engine.answerRunApproval(world.ns, real.topId, real.approvalId, { decision: 'approve', by }),
      r.engine.cancelRun(world.ns, real.topId),
    ]);
    if (tree.state === 'ended') {
      expect([approved.status, cancelled.status]).toEqual(['rejected', 'rejected']);
      return checkInvariant(m, r);
    }
    expect(cancelled.status, cancelled.status === 'rejected' ? String(cancelled.reason) : '').toBe('fulfilled');
    const now = await settle(real.topId, allEnded, 'ended');
    expect(now[0]).toBe('Cancelled');
    const made = received() - r.before - m.trees.reduce((sum, t) => sum + t.calls, 0);
    // A call is made only if the approval won the race and the call's start committed before the cancel.
    const allowed = approved.status === 'fulfilled' && !tree.keyDeleted ? (m.disabled ? 0 : 1) + 1 : 0;
    expect(made).toBeLessThanOrEqual(allowed);
    tree.calls = made;
    tree.state = 'ended';
    checkInvariant(m, r);
  }
}

const tree = fc.nat({ max: 5 });
const kind = fc.constantFrom(...KINDS);
const COMMANDS = [
  kind.map((k) => new Start(k)),
  tree.map((i) => new Approve(i)),
  tree.map((i) => new Reject(i)),
  tree.map((i) => new Cancel(i)),
  tree.map((i) => new DeleteKey(i)),
  fc.boolean().map((d) => new SetDisabled(d)),
  fc.constant(new RestartWorker()),
  fc.tuple(kind, fc.integer({ min: 0, max: 30 })).map(([k, ms]) => new StartThenCancel(k, ms)),
  tree.map((i) => new ApproveAndCancel(i)),
];

const runs = Number(process.env.MT_FC_RUNS ?? 200);
const seed = process.env.MT_FC_SEED === undefined ? undefined : Number(process.env.MT_FC_SEED);

describe('the run tree, model-based (fast-check)', () => {
  it(`holds "no call after the tree is cancelled or its authority gone, none twice" over ${runs} generated sequences`, {
    timeout: 120_000,
  }, async () => {
    let engine = await world.engine({ wakeups });
    await fc.assert(
      fc.asyncProperty(fc.commands(COMMANDS, { maxCommands: 5 }), async (cmds) => {
        // Each sequence starts with the tool enabled and the worker of the one before.
        await setVersionEnabled(world.db, world.ns, 'tool', 'refund-order', refundVersion, true);
        const real: Real = { engine, trees: [], before: received() };
        if (process.env.MT_FC_TIMES) {
          for (const cmd of cmds) {
            const run = cmd.run.bind(cmd);
            cmd.run = async (m, r) => {
              const t = performance.now();
              await run(m, r);
              console.log(cmd.toString(), Math.round(performance.now() - t));
            };
          }
        }
        try {
          await fc.asyncModelRun(() => ({ model: { trees: [], disabled: false, restarts: 0 }, real }), cmds);
        } finally {
          engine = real.engine;
        }
      }),
      { numRuns: runs, seed, path: process.env.MT_FC_PATH, endOnFailure: true, verbose: 1 },
    );
  });
});
