import { randomUUID } from 'node:crypto';
import {
  appendRunEvents,
  claimChainDelivery,
  createNamespace,
  type Db,
  findRun,
  insertRun,
  listDeliveries,
  migrate,
  pendingChainDeliveries,
  pruneBefore,
  refuseChainDelivery,
} from '@maitento/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bothBackends } from './backends.js';

// Chaining triggers in the store (docs/schedules-and-triggers.md, "When another run ends"; decision 0350): the statement
// that records a top-level run's end writes a `pending` delivery for each trigger whose latest enabled version follows
// the run's interaction and that end, and the start's claim turns it `started` once.
const NS = 'chain-a';
const OTHER = 'chain-b';

const backends = bothBackends('mt_store_chain');

const chaining = (follows: string, statuses: string[], enabled = true) => ({
  kind: 'trigger',
  interaction: 'review',
  inputs: {},
  on: { runCompleted: follows, statuses },
  maxBodyBytes: 262144,
  enabled,
});

describe.each(backends)('deliveries owed by a run ending, on %s', (_name, open) => {
  let db: Db;
  let done: () => Promise<void>;

  const version = async (
    name: string,
    v: number,
    resource: Record<string, unknown>,
    options: { enabled?: boolean; hash?: string; namespace?: string } = {},
  ) => {
    await db.query(
      'INSERT INTO mt_resource_versions (namespace, kind, name, version, hash, resource, enabled) ' +
        "VALUES ($1, 'trigger', $2, $3, $4, $5, $6)",
      [
        options.namespace ?? NS,
        name,
        v,
        options.hash ?? `h-${name}-${v}`,
        JSON.stringify({ ...resource, name }),
        options.enabled ?? true,
      ],
    );
  };

  const newRun = async (interaction: string, parent?: string, namespace = NS) => {
    const id = randomUUID();
    await insertRun(
      db,
      {
        id,
        namespace,
        interaction,
        interactionVersion: 1,
        versions: [{ kind: 'interaction', name: interaction, version: 1 }],
        inputs: {},
        interactive: false,
        ...(parent === undefined ? {} : { child: { parentRunId: parent, step: 1, index: 0, agent: 'a', depth: 1 } }),
      },
      { type: 'run-started', data: {} },
    );
    return id;
  };

  const end = (id: string, status: 'Completed' | 'Failed' | 'Cancelled') =>
    appendRunEvents(
      db,
      id,
      { statuses: ['Running'] },
      [{ type: status === 'Completed' ? 'run-completed' : 'run-failed', data: {} }],
      status === 'Completed' ? { status, result: 'done' } : { status, error: { code: 'api:runs:x', message: 'no' } },
    );

  const owed = async (runId: string) =>
    (
      await db.query<{ trigger: string; version: number; status: string }>(
        'SELECT trigger, version, status FROM mt_trigger_deliveries WHERE event_id = $1 ORDER BY trigger',
        [runId],
      )
    ).rows;

  beforeAll(async () => {
    ({ db, done } = await open());
    await migrate(db);
    await createNamespace(db, NS);
    await createNamespace(db, OTHER);
    await version('follow', 1, chaining('support', ['Completed']));
    await version('on-failure', 1, chaining('support', ['Failed']));
    await version('webhook', 1, {
      kind: 'trigger',
      interaction: 'review',
      inputs: {},
      verify: { style: 'github', secret: 's', toleranceSeconds: 300 },
      maxBodyBytes: 262144,
      enabled: true,
    });
    // Its latest version is switched off in its file: no delivery.
    await version('switched-off', 1, chaining('support', ['Completed']));
    await version('switched-off', 2, chaining('support', ['Completed'], false));
    // Deleted (decision 0295's marker): no delivery.
    await version('deleted', 1, chaining('support', ['Completed']));
    await version('deleted', 2, {}, { hash: 'deleted' });
    // Its latest version disabled: the latest enabled one (1) takes it.
    await version('rolled-back', 1, chaining('support', ['Completed', 'Failed']));
    await version('rolled-back', 2, chaining('other', ['Completed']), { enabled: false });
    // Another namespace's trigger on the same interaction name.
    await version('elsewhere', 1, chaining('support', ['Completed']), { namespace: OTHER });
  });
  afterAll(async () => {
    await done?.();
  });

  it("writes a pending delivery with a run's end, for each trigger whose latest enabled version follows it", async () => {
    const completed = await newRun('support');
    // An append that ends nothing owes nothing.
    expect(await appendRunEvents(db, completed, { statuses: ['Running'] }, [{ type: 'note', data: {} }])).not.toBe(
      false,
    );
    expect(await owed(completed)).toEqual([]);
    await end(completed, 'Completed');
    expect(await owed(completed)).toEqual([
      { trigger: 'follow', version: 1, status: 'pending' },
      { trigger: 'rolled-back', version: 1, status: 'pending' },
    ]);
    const failed = await newRun('support');
    await end(failed, 'Failed');
    expect(await owed(failed)).toEqual([
      { trigger: 'on-failure', version: 1, status: 'pending' },
      { trigger: 'rolled-back', version: 1, status: 'pending' },
    ]);
    const cancelled = await newRun('support');
    await end(cancelled, 'Cancelled');
    expect(await owed(cancelled)).toEqual([]);
    // A child run's end is a step of its parent; another interaction's end is not followed.
    const child = await newRun('support', completed);
    await end(child, 'Completed');
    expect(await owed(child)).toEqual([]);
    const unrelated = await newRun('triage');
    await end(unrelated, 'Completed');
    expect(await owed(unrelated)).toEqual([]);
    // The other namespace's trigger follows its own namespace's runs only.
    const there = await newRun('support', undefined, OTHER);
    await end(there, 'Completed');
    expect(await owed(there)).toEqual([{ trigger: 'elsewhere', version: 1, status: 'pending' }]);
  });

  it('lists the pending deliveries, and lets one claim start each (the second finds it started) or refuse it', async () => {
    const ended = await newRun('support');
    await end(ended, 'Completed');
    const pending = (await pendingChainDeliveries(db, 100)).filter((d) => d.runId === ended);
    expect(pending.map((d) => [d.namespace, d.trigger, d.version])).toEqual([
      [NS, 'follow', 1],
      [NS, 'rolled-back', 1],
    ]);
    const key = { namespace: NS, trigger: 'follow', runId: ended };
    const started = await newRun('review');
    expect(await claimChainDelivery(db, key, started)).toBe(true);
    expect(await claimChainDelivery(db, key, randomUUID())).toBe(false);
    expect(await refuseChainDelivery(db, key, { code: 'api:triggers:too-deep', message: 'too deep' })).toBe(false);
    const other = { namespace: NS, trigger: 'rolled-back', runId: ended };
    expect(await refuseChainDelivery(db, other, { code: 'api:triggers:too-deep', message: 'too deep' })).toBe(true);
    expect(await claimChainDelivery(db, other, randomUUID())).toBe(false);
    expect((await pendingChainDeliveries(db, 100)).filter((d) => d.runId === ended)).toEqual([]);
    const [log] = (await listDeliveries(db, NS, 'follow', 10)).filter((d) => d.eventId === ended);
    expect(log).toMatchObject({ status: 'started', runId: started, answerStatus: null, code: null });
    const [refused] = (await listDeliveries(db, NS, 'rolled-back', 10)).filter((d) => d.eventId === ended);
    expect(refused).toMatchObject({
      status: 'refused',
      runId: null,
      code: 'api:triggers:too-deep',
      detail: 'too deep',
    });
  });

  it('keeps a delivery still owed from the retention job, and deletes the settled ones', async () => {
    const ended = await newRun('support');
    await end(ended, 'Completed');
    await claimChainDelivery(db, { namespace: NS, trigger: 'follow', runId: ended }, randomUUID());
    await pruneBefore(db, new Date(Date.now() + 60_000));
    expect(await owed(ended)).toEqual([{ trigger: 'rolled-back', version: 1, status: 'pending' }]);
  });

  it('stores what started a run and a top-level depth with it', async () => {
    const id = randomUUID();
    await insertRun(
      db,
      {
        id,
        namespace: NS,
        interaction: 'review',
        interactionVersion: 1,
        versions: [],
        inputs: {},
        interactive: false,
        origin: { kind: 'trigger', name: 'follow', version: 1, eventId: 'x', runId: 'x', status: 'Completed' },
        depth: 2,
      },
      { type: 'run-started', data: {} },
    );
    expect(await findRun(db, id)).toMatchObject({
      depth: 2,
      parentRunId: null,
      origin: { kind: 'trigger', name: 'follow', runId: 'x' },
    });
    expect((await findRun(db, await newRun('review')))?.origin).toBeNull();
  });
});
