import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLimiter, createPgDb, createPgliteDb, type Db, type LimitRequest, migrate } from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Limits that hold across processes (docs/limits.md): three pools on one database stand for three processes.
let database: TestDatabase;
const dbs: Db[] = [];

beforeAll(async () => {
  database = await createTestDatabase('mt_store_limits', { migrated: true });
  for (let i = 0; i < 3; i++) dbs.push(createPgDb(database.url));
  await migrate(dbs[0] as Db);
});

afterAll(async () => {
  await Promise.all(dbs.map((db) => db.close()));
  await database?.drop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the limiter', () => {
  it('admits at most N calls in any window of the limit, counted across processes, and admits the rest later', async () => {
    const limiters = dbs.map((db) => createLimiter(db));
    const request: LimitRequest = {
      namespace: 'ns',
      limits: [{ key: 'tool:a', calls: 4, perMs: 1000 }],
      leaseMs: 10_000,
    };
    const admitted: number[] = [];
    // 12 callers on three processes, each trying until admitted (every wait bounded by the test's deadline).
    const deadline = Date.now() + 15_000;
    await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const limiter = limiters[i % 3]!;
        while (Date.now() < deadline) {
          const decision = await limiter.acquire(request);
          if (decision.granted) {
            admitted.push(decision.admittedAtMs);
            return;
          }
          expect(decision.reason).toBe('calls');
          expect(decision.retryAfterMs).toBeGreaterThan(0);
          expect(decision.retryAfterMs).toBeLessThanOrEqual(1000);
          await sleep(decision.retryAfterMs);
        }
      }),
    );
    expect(admitted).toHaveLength(12);
    // Admission times are the database's clock: the (i+N)th admission is at least a whole window after the ith.
    admitted.sort((a, b) => a - b);
    for (let i = 0; i + 4 < admitted.length; i++) {
      expect(admitted[i + 4]! - admitted[i]!).toBeGreaterThanOrEqual(1000);
    }
  });

  it('keeps calls in flight at most at the cap, and frees a slot on release', async () => {
    const limiters = dbs.map((db) => createLimiter(db));
    const request: LimitRequest = { namespace: 'ns', limits: [{ key: 'tool:b', inFlight: 2 }], leaseMs: 10_000 };
    let inFlight = 0;
    let most = 0;
    const deadline = Date.now() + 15_000;
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const limiter = limiters[i % 3]!;
        while (Date.now() < deadline) {
          const decision = await limiter.acquire(request);
          if (!decision.granted) {
            expect(decision.reason).toBe('in-flight');
            await sleep(decision.retryAfterMs);
            continue;
          }
          inFlight += 1;
          most = Math.max(most, inFlight);
          await sleep(20);
          inFlight -= 1;
          await decision.release();
          return;
        }
        throw new Error('not admitted before the deadline');
      }),
    );
    expect(most).toBe(2);
  });

  it('frees the in-flight slot of a process that never released it once its lease lapses', async () => {
    const [a, b] = dbs.map((db) => createLimiter(db));
    const request: LimitRequest = { namespace: 'ns', limits: [{ key: 'tool:c', inFlight: 1 }], leaseMs: 300 };
    const held = await a!.acquire(request);
    expect(held.granted).toBe(true);
    // "Killed": never released.
    const refused = await b!.acquire(request);
    expect(refused).toMatchObject({ granted: false, reason: 'in-flight' });
    await sleep(350);
    expect((await b!.acquire(request)).granted).toBe(true);
  });

  it('admits a call under all its limits or none: a refusal by one leaves the others untouched', async () => {
    const limiter = createLimiter(dbs[1]!);
    const both = (tool: string): LimitRequest => ({
      namespace: 'ns',
      limits: [
        { key: `tool:${tool}`, calls: 5, perMs: 60_000 },
        { key: 'origin:http://127.0.0.1:1', calls: 2, perMs: 60_000, inFlight: 1 },
      ],
      leaseMs: 10_000,
    });
    const first = await limiter.acquire(both('e'));
    expect(first.granted).toBe(true);
    // The origin's one slot in flight is taken (by another tool on the same origin).
    expect(await limiter.acquire(both('f'))).toMatchObject({
      granted: false,
      reason: 'in-flight',
      key: 'origin:http://127.0.0.1:1',
    });
    if (first.granted) await first.release();
    expect((await limiter.acquire(both('f'))).granted).toBe(true);
    // The origin's 2 calls a minute are used: tool g is refused by the origin's limit, and its own count is untouched.
    expect(await limiter.acquire(both('g'))).toMatchObject({ granted: false, reason: 'calls' });
    const { rows } = await dbs[0]!.query<{ n: string }>(
      "SELECT count(*) AS n FROM mt_limit_slots WHERE namespace = 'ns' AND limit_key = 'tool:g'",
    );
    expect(Number(rows[0]!.n)).toBe(0);
  });

  it('counts each namespace on its own', async () => {
    const limiter = createLimiter(dbs[0]!);
    const request = (namespace: string): LimitRequest => ({
      namespace,
      limits: [{ key: 'tool:d', calls: 1, perMs: 60_000 }],
      leaseMs: 1000,
    });
    expect((await limiter.acquire(request('one'))).granted).toBe(true);
    expect((await limiter.acquire(request('one'))).granted).toBe(false);
    expect((await limiter.acquire(request('two'))).granted).toBe(true);
  });

  it('works the same on PGlite (mt serve --data)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mt-limits-pglite-'));
    const db = await createPgliteDb(join(dir, 'db'));
    try {
      await migrate(db);
      const limiter = createLimiter(db);
      const request: LimitRequest = {
        namespace: 'p',
        limits: [{ key: 'tool:p', calls: 1, perMs: 60_000, inFlight: 1 }],
        leaseMs: 1000,
      };
      const first = await limiter.acquire(request);
      expect(first.granted).toBe(true);
      expect(await limiter.acquire(request)).toMatchObject({ granted: false, reason: 'calls', key: 'tool:p' });
      if (first.granted) await first.release();
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
