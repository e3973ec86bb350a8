// The engine's tool calls read through the store cache (packages/store/src/cache): two engines on one real
// PostgreSQL database, each with its own pool and cache, as `mt serve` and `mt worker` are. Engine A only starts
// runs (the API server); engine B executes them (the worker), with every statement of its pool recorded.
import type { Gateway, ToolCallInput } from '@maitento/gateway';
import {
  createPgDb,
  createStoreCache,
  type Db,
  type Queryable,
  setVersionEnabled,
  type StoreCache,
} from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '@maitento/engine';
import { type Seen, waitFor, type World, ordersWorld, type TestUpstream } from './helpers.js';

let database: TestDatabase;
let world: World;
let upstream: TestUpstream;
let cacheA: StoreCache;
let cacheB: StoreCache;
let dbB: Db;
let server: RunningEngine;
const holds = new Map<string, Promise<unknown>>();
/** Every statement engine B's pool ran, in order, with the cache's sync count when it was sent. */
const statements: { sql: string; params: unknown[]; syncs: number }[] = [];
/** The tool objects engine B's gateway was handed. */
const gatewayTools: ToolCallInput['tool'][] = [];

const getOrder = (orderId: string) => ({
  toolCalls: [
    { name: 'get-order', arguments: { additionalInputs: { 'path.orderId': orderId, 'query.verbose': null } } },
  ],
});

/** `db` with every statement recorded (those of its transactions too). */
function recording(db: Db): Db {
  const record = (target: Queryable): Queryable => ({
    query: (sql, params = []) => {
      statements.push({ sql, params, syncs: cacheB?.syncs ?? 0 });
      return target.query(sql, params);
    },
    exec: (sql) => {
      statements.push({ sql, params: [], syncs: cacheB?.syncs ?? 0 });
      return target.exec(sql);
    },
  });
  return { ...db, ...record(db), transaction: (fn) => db.transaction((tx) => fn(record(tx))) };
}

function callsTo(orderId: string): Seen[] {
  return upstream.seen.filter((s) => s.url.split('?')[0] === `/orders/${orderId}`);
}

async function runToEnd(orders: string[]) {
  world.script('support', [...orders.map(getOrder), { text: 'done' }]);
  const started = await server.startRun(world.ns, 'support', { inputs: { message: 'x' } });
  const run = await waitFor(server, world.ns, started.id);
  const results = (await server.listEvents(world.ns, run.id))
    .filter((e) => e.type === 'tool-result')
    .map((e) => e.data as { ok: boolean; code: string | null });
  return { run, results, versions: started.versions };
}

beforeAll(async () => {
  database = await createTestDatabase('mt_engine_cache', { migrated: true });
  ({ world, upstream } = await ordersWorld(
    (req) => ({ body: { order: req.url }, wait: holds.get(req.url.split('?')[0]) }),
    { db: createPgDb(database.url) },
  ));
  dbB = recording(createPgDb(database.url));
  cacheA = await createStoreCache(world.db, { secretKey: world.secretKey });
  cacheB = await createStoreCache(dbB, { secretKey: world.secretKey });
  const gateway: Gateway = {
    ...world.gateway,
    call: (input) => {
      gatewayTools.push(input.tool);
      return world.gateway.call(input);
    },
  };
  server = await world.engine({ cache: cacheA, worker: false });
  await world.engine({ db: dbB, cache: cacheB, gateway });
});

afterAll(async () => {
  await world?.close();
  await cacheA?.close();
  await cacheB?.close();
  await dbB?.close();
  await database?.drop();
});

describe("the engine's calls through the store cache", () => {
  it("a tool disabled through one process is refused at the other's next tool call, and enabled again at once", async () => {
    let release!: () => void;
    holds.set('/orders/D-1', new Promise<void>((resolve) => (release = resolve)));
    world.script('support', [getOrder('D-1'), getOrder('D-2'), { text: 'done' }]);
    const started = await server.startRun(world.ns, 'support', { inputs: { message: 'x' } });
    const tool = started.versions.find((v) => v.kind === 'tool' && v.name === 'get-order')!;
    // The first call has read (and cached) the pinned version as enabled in the worker's cache.
    while (callsTo('D-1').length === 0) await new Promise((r) => setTimeout(r, 20));
    // As the server's disable route does: the write alone (it steps the cache epoch), nothing told to any cache.
    await setVersionEnabled(world.db, world.ns, 'tool', 'get-order', tool.version, false);
    release();
    const run = await waitFor(server, world.ns, started.id);
    const results = (await server.listEvents(world.ns, run.id)).filter((e) => e.type === 'tool-result');
    expect(run.status).toBe('Completed');
    expect(results.map((e) => e.data.code)).toEqual([null, 'api:extops:version-disabled']);
    expect(callsTo('D-2')).toEqual([]);

    await setVersionEnabled(world.db, world.ns, 'tool', 'get-order', tool.version, true);
    const after = await runToEnd(['D-3']);
    expect(after.results).toEqual([expect.objectContaining({ ok: true })]);
    expect(callsTo('D-3')).toHaveLength(1);
  });

  it("a warmed tool call runs no statement of its own: its turn's write reads the cache epoch", async () => {
    const warm = await runToEnd(['W-1', 'W-2']);
    expect(warm.results.map((r) => r.ok)).toEqual([true, true]);
    statements.length = 0;
    const syncsBefore = cacheB.syncs;
    const { run, results } = await runToEnd(['W-3', 'W-4']);
    expect(run.status).toBe('Completed');
    expect(results.map((r) => r.ok)).toEqual([true, true]);

    // The worker's timers (cancel poll, approval expiry) run on their own clock; the run's own statements:
    const own = statements.filter((s) => !/^SELECT id FROM mt_runs/.test(s.sql) && !s.sql.includes('mt_approvals'));
    // (The appends name mt_resource_versions for the chaining triggers a run's end owes a delivery, decision 0350:
    // that part reads nothing unless the append ends a top-level run.)
    const isAppend = (sql: string) => sql.startsWith('WITH run AS (UPDATE mt_runs SET last_seq');
    expect(own.filter((s) => !isAppend(s.sql) && /mt_resource_versions|mt_secrets/.test(s.sql))).toEqual([]);
    expect(own.filter((s) => isAppend(s.sql) && /mt_secrets/.test(s.sql))).toEqual([]);
    const appends = own
      .map((s, i) => ({ i, s, types: String(s.params[11] ?? '') }))
      .filter((a) => a.s.sql.startsWith('WITH run AS (UPDATE mt_runs SET last_seq'));
    const turns = appends.filter((a) => a.types.includes('"tool-call-started"'));
    expect(turns).toHaveLength(2);
    for (const turn of turns) {
      // The turn's write (with tool-call-started) reads the epoch; the next statement is the call's result.
      expect(turn.s.sql).toContain('mt_cache_epoch');
      const next = own[turn.i + 1];
      expect(next?.sql.startsWith('WITH run AS (UPDATE mt_runs SET last_seq')).toBe(true);
      expect(String(next?.params[11])).toContain('"tool-result"');
    }
    // No statement but the appends reads it (each append reads it in its own statement), and the cache made no sync
    // of its own.
    expect(own.filter((s) => s.sql.includes('mt_cache_epoch') && !s.sql.startsWith('WITH run AS'))).toEqual([]);
    expect(cacheB.syncs - syncsBefore).toBe(0);
  });

  it("hands the gateway the cache's frozen version objects, the same for every call, so one plan serves them", async () => {
    gatewayTools.length = 0;
    const { versions } = await runToEnd(['P-1', 'P-2']);
    const pinned = versions.find((v) => v.kind === 'tool' && v.name === 'get-order')!;
    const cached = await cacheB.getVersion(world.ns, 'tool', 'get-order', pinned.version);
    expect(gatewayTools).toHaveLength(2);
    expect(gatewayTools[0]).toBe(cached.resource);
    expect(gatewayTools[1]).toBe(cached.resource);
    expect(Object.isFrozen(cached.resource)).toBe(true);
  });
});
