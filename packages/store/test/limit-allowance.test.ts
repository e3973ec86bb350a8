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
