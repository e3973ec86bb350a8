import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createLimiter, createPgDb, type Db, type LimitRequest, migrate } from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The local allowance of the limiter (decision 0375, docs/limits.md): far from a limit, a process leases permits
// from the shared count and spends them without a round trip; the bound across processes stays exact. Three pools on
// one database stand for three processes; a real child process stands for the one SIGKILLed holding a lease.
let database: TestDatabase;
const dbs: Db[] = [];
const storeDist = fileURLToPath(new URL('../dist/index.js', import.meta.url));

beforeAll(async () => {
  database = await createTestDatabase('mt_store_limit_allowance', { migrated: true });
  for (let i = 0; i < 3; i++) dbs.push(createPgDb(database.url));
  await migrate(dbs[0] as Db);
});

afterAll(async () => {
  await Promise.all(dbs.map((db) => db.close()));
  await database?.drop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `db` with a count of the transactions begun on it (each round trip of the shared count is one). */
function counting(db: Db): { db: Db; transactions: () => number } {
  let n = 0;
  const wrapped = new Proxy(db, {
    get(target, name, receiver) {
      if (name === 'transaction') {
        return (fn: Parameters<Db['transaction']>[0]) => {
          n += 1;
          return target.transaction(fn);
        };
      }
      const value = Reflect.get(target, name, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { db: wrapped, transactions: () => n };
}

/** The calls `key`'s count holds now: the sum of its rows' permits (one a call, k a lease of k). */
async function rows(key: string): Promise<number> {
  const { rows } = await (dbs[0] as Db).query<{ n: string }>(
    `SELECT coalesce(sum(permits), 0) AS n FROM mt_limit_slots
      WHERE namespace = 'ns' AND limit_key = $1 AND expires_at > clock_timestamp()`,
    [key],
  );
  return Number(rows[0]?.n);
}

describe('the local allowance', () => {
  it('far from the limit, spends leased permits without a round trip, and gives the unused back', async () => {
    const { db, transactions } = counting(dbs[0] as Db);
    const limiter = createLimiter(db);
    const request: LimitRequest = {
      namespace: 'ns',
      limits: [{ key: 'tool:far', calls: 100_000, perMs: 60_000 }],
      leaseMs: 10_000,
    };
    for (let i = 0; i < 200; i++) expect((await limiter.acquire(request)).granted).toBe(true);
    // Leases of 16, 32, 64, 128 ... permits (each twice the last one spent before its end): 200 calls in a few round
    // trips, not 200.
    expect(transactions()).toBeLessThanOrEqual(8);
    expect(await rows('tool:far')).toBeGreaterThanOrEqual(200);
    // A lease is one row, whatever its permits: the count's cost does not grow with the calls.
    const { rows: physical } = await (dbs[0] as Db).query<{ n: string }>(
      "SELECT count(*) AS n FROM mt_limit_slots WHERE namespace = 'ns' AND limit_key = 'tool:far'",
    );
    expect(Number(physical[0]?.n)).toBeLessThanOrEqual(2 * transactions());
    // The lease ends after a tenth of the window (at most 1 s): the unused permits' rows are deleted.
    await sleep(1300);
    expect(await rows('tool:far')).toBe(200);
  });

  it("spends held permits at once, without a promise: under all of a call's limits or none", async () => {
    const { db, transactions } = counting(dbs[0] as Db);
    const limiter = createLimiter(db);
    const far = { key: 'tool:spend', calls: 1_000_000, perMs: 60_000 };
    const other = { key: 'origin:spend', calls: 1_000_000, perMs: 60_000 };
    // Nothing held yet: spend takes nothing and says so; acquire asks the database and leases 16 permits.
    expect(limiter.spend('ns', [far])).toBe(false);
    expect((await limiter.acquire({ namespace: 'ns', limits: [far], leaseMs: 10_000 })).granted).toBe(true);
    expect(await rows('tool:spend')).toBe(1 + 16);
    // A call also under a count this process holds nothing of is not admitted here, and takes none of `far`'s permits.
    expect(limiter.spend('ns', [far, other])).toBe(false);
    // The 16 permits, spent in one synchronous loop (a lease asked ahead meanwhile cannot land before it ends).
    let spent = 0;
    while (limiter.spend('ns', [far])) spent += 1;
    expect(spent).toBe(16);
    // The first lease, and the one asked ahead once half of it was spent.
    expect(transactions()).toBe(2);
  });

  it('asks the next lease ahead as the last one nears its end: a steady caller never waits for the database', async () => {
    const { db, transactions } = counting(dbs[1] as Db);
    // Leases of 800 ms; a call every 120 ms spends 6 or 7 of a lease's 16 permits, never half: only the lease's time
    // running out (a quarter, 200 ms, left) asks the next one ahead.
    const limiter = createLimiter(db, { leaseMs: () => 800 });
    const request: LimitRequest = {
      namespace: 'ns',
      limits: [{ key: 'tool:steady', calls: 1_000_000, perMs: 60_000 }],
      leaseMs: 10_000,
    };
    let asked = 0;
    const end = performance.now() + 4000;
    while (performance.now() < end) {
      if (!limiter.spend(request.namespace, request.limits)) {
        asked += 1;
        expect((await limiter.acquire(request)).granted).toBe(true);
      }
      await sleep(120);
    }
    // One call asked (the first); without the lease asked ahead, one in each of the five leases would have (a second
    // is allowed for a machine so slow that a lease asked ahead did not land in its last 200 ms).
    expect(asked).toBeLessThanOrEqual(2);
    expect(transactions()).toBeGreaterThanOrEqual(4);
  });

  it('sizes the lease asked ahead to last its time at the rate the last one is spent', async () => {
    const limiter = createLimiter(dbs[2] as Db);
    const far = { key: 'tool:fast', calls: 1_000_000, perMs: 60_000 };
    expect((await limiter.acquire({ namespace: 'ns', limits: [far], leaseMs: 10_000 })).granted).toBe(true);
    // Half of the 16 permits spent at once: the lease asked ahead is as big as lasts 1 s at that rate (8 permits in
    // the lease's round trip and a few µs), far more than the 32 that doubling would give.
    for (let i = 0; i < 8; i++) expect(limiter.spend('ns', [far])).toBe(true);
    await sleep(200);
    const { rows: leases } = await (dbs[0] as Db).query<{ permits: number }>(
      "SELECT permits FROM mt_limit_slots WHERE namespace = 'ns' AND limit_key = 'tool:fast' AND id LIKE '%:lease' ORDER BY expires_at",
    );
    expect(leases.map((l) => l.permits)).toHaveLength(2);
    expect(leases[0]?.permits).toBe(16);
    expect(leases[1]?.permits).toBeGreaterThan(32);
    expect(leases[1]?.permits).toBeLessThanOrEqual(4096);
  });

  it('near the limit, every call asks the database: a small limit leases nothing', async () => {
    const { db, transactions } = counting(dbs[1] as Db);
    const limiter = createLimiter(db);
    const request: LimitRequest = {
      namespace: 'ns',
      limits: [{ key: 'tool:near', calls: 10, perMs: 60_000 }],
      leaseMs: 10_000,
    };
    for (let i = 0; i < 10; i++) expect((await limiter.acquire(request)).granted).toBe(true);
    expect(await limiter.acquire(request)).toMatchObject({ granted: false, reason: 'calls' });
    expect(transactions()).toBe(11);
    expect(await rows('tool:near')).toBe(10);
  });

  it('keeps the bound exact across three racing processes: any window holds at most N admissions', async () => {
    const limiters = dbs.map((db) => createLimiter(db));
    const N = 60;
    const perMs = 1000;
    const request: LimitRequest = { namespace: 'ns', limits: [{ key: 'tool:race', calls: N, perMs }], leaseMs: 10_000 };
    const admitted: number[] = [];
    let refused = 0;
    const end = Date.now() + 3500;
    // 12 callers on three processes, calling as fast as they can for 3.5 s (each refusal waits its retry time).
    await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const limiter = limiters[i % 3]!;
        while (Date.now() < end) {
          const decision = await limiter.acquire(request);
          if (decision.granted) admitted.push(decision.admittedAtMs);
          else {
            refused += 1;
            await sleep(Math.min(decision.retryAfterMs, 50));
          }
        }
      }),
    );
    expect(refused).toBeGreaterThan(0);
    // At least three windows' worth got through (the leases' unused permits went back), never N + 1 in a window: the
    // admission times are the database's clock (a leased permit's: its lease's time plus the time since).
    expect(admitted.length).toBeGreaterThanOrEqual(2 * N);
    admitted.sort((a, b) => a - b);
    for (let i = 0; i + N < admitted.length; i++) {
      expect(admitted[i + N]! - admitted[i]!).toBeGreaterThanOrEqual(perMs);
    }
  });

  it('a process SIGKILLed holding a lease: its permits count until their window and lease end, never more get through', async () => {
    expect(existsSync(storeDist), 'build first: npm run build').toBe(true);
    const N = 100;
    const perMs = 2000;
    const script = `
      import { createLimiter, createPgDb } from ${JSON.stringify(storeDist)};
      const limiter = createLimiter(createPgDb(${JSON.stringify(database.url)}));
      const decision = await limiter.acquire({ namespace: 'ns', limits: [{ key: 'tool:killed', calls: ${N}, perMs: ${perMs} }], leaseMs: 10000 });
      console.log(decision.granted ? 'leased' : 'refused');
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += String(chunk);
    });
    const said = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the child did not lease in 20 s: ${stderr}`)), 20_000);
      child.stdout.on('data', (chunk: Buffer) => {
        clearTimeout(timer);
        resolve(String(chunk).trim());
      });
    });
    expect(said).toBe('leased');
    const held = await rows('tool:killed');
    // One call and its lease: 1 + floor(99 / 8) = 13 permits.
    expect(held).toBe(13);
    child.kill('SIGKILL');
    const killedAt = Date.now();
    await new Promise((resolve) => child.once('exit', resolve));
    // The others get N − 13 in the window; the killed process's leased rows were never given back, so they count.
    const limiter = createLimiter(dbs[2] as Db);
    const request: LimitRequest = {
      namespace: 'ns',
      limits: [{ key: 'tool:killed', calls: N, perMs }],
      leaseMs: 10_000,
    };
    let granted = 0;
    while ((await limiter.acquire(request)).granted) granted += 1;
    expect(Date.now() - killedAt).toBeLessThan(perMs);
    // At most N − 13 (fewer only when a lease of this process ended unspent and its rows were not deleted yet).
    expect(granted).toBeLessThanOrEqual(N - held);
    expect(granted).toBeGreaterThan(N - held - 16);
    // Once the window and the lease's time (a tenth of it) are over, nothing of the killed process counts.
    await sleep(perMs + perMs / 10 + 100);
    expect(await rows('tool:killed')).toBe(0);
    expect((await limiter.acquire(request)).granted).toBe(true);
  });
});
