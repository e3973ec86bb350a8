// The bounded cache lease (schema 17, packages/store/src/cache/lease.ts) on a real PostgreSQL database: each
// "process" here is its own pool, wake-up connection, cache and lease, as `mt serve` has them. A live cache makes no
// statement a sync; a member whose LISTEN connection stalls (behind a TCP proxy) reads through within the lease and
// holds a write no longer than the lease; nobody can join under a reused id, and another role can neither write the
// members table nor release a write with a forged notification.
import { randomBytes, randomUUID } from 'node:crypto';
import {
  bootstrap,
  type CacheLease,
  createApiKey,
  createPgDb,
  createStoreCache,
  type Db,
  deleteApiKey,
  IDLE_REASON,
  migrate,
  openWakeups,
  type StoreCache,
  startCacheLease,
  type WakeupsOptions,
} from '@maitento/store';
import { createTestDatabase, startTcpProxy, TEST_SERVER_URL, type TestDatabase } from '@maitento/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const L = 400;
const secretKey = randomBytes(32);
let database: TestDatabase;
let writer: Db;
const closing: (() => Promise<void>)[] = [];

interface Member {
  db: Db;
  cache: StoreCache;
  lease: CacheLease;
  /** Statements on the pool (the epoch reads of read-through syncs among them). */
  statements(): number;
}

async function member(wake: WakeupsOptions = {}, memberId?: string): Promise<Member> {
  const inner = createPgDb(database.url);
  let statements = 0;
  const db: Db = {
    ...inner,
    query: (text, params, options) => {
      statements++;
      return inner.query(text, params, options);
    },
  };
  const cache = await createStoreCache(db, { secretKey });
  const wakeups = await openWakeups(db, { deadlineMs: 300, pingMs: 200, retryMs: 100, ...wake });
  const lease = startCacheLease({ db, wakeups, cache, leaseMs: L, ...(memberId ? { memberId } : {}) });
  closing.push(async () => {
    await lease.close();
    await wakeups.close();
    await cache.close();
    await inner.close();
  });
  return { db, cache, lease, statements: () => statements };
}

async function until(what: () => boolean | Promise<boolean>, ms = 3000): Promise<number> {
  const began = performance.now();
  while (!(await what())) {
    if (performance.now() - began > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return performance.now() - began;
}

beforeAll(async () => {
  database = await createTestDatabase('mt_cache_lease');
  writer = createPgDb(database.url);
  await migrate(writer);
  await bootstrap(writer, { key: `mt_${randomBytes(24).toString('base64url')}` });
});

afterAll(async () => {
  for (const close of closing.reverse()) await close();
  await writer?.close();
  await database?.drop();
});

describe('the bounded cache lease', { timeout: 30_000 }, () => {
  it('while live, a sync makes no statement; a key deleted and settled elsewhere is not served after', async () => {
    const m = await member();
    await until(() => m.cache.live);
    expect(m.lease.state()).toEqual({ mode: 'live' });
    const key = await createApiKey(writer, 'default', { role: 'user' });
    await m.cache.sync();
    expect(await m.cache.authenticateApiKey(key.key)).toMatchObject({ keyId: key.id });
    const syncs = m.cache.syncs;
    const before = m.statements();
    for (let i = 0; i < 20; i++) {
      await m.cache.sync();
      await m.cache.authenticateApiKey(key.key);
    }
    // The fast path: no epoch read, no statement at all on the pool.
    expect([m.cache.syncs - syncs, m.statements() - before]).toEqual([0, 0]);

    const other = await member();
    await until(() => other.cache.live);
    await deleteApiKey(writer, 'default', key.id);
    const began = performance.now();
    await other.lease.settle();
    const settled = performance.now() - began;
    expect(m.cache.live).toBe(true);
    await m.cache.sync();
    expect(await m.cache.authenticateApiKey(key.key)).toBeUndefined();
    // Both members acknowledged at once: the settle did not wait for a lease to end.
    expect(settled).toBeLessThan(L / 2);
    const { rows } = await writer.query<{ lagging: string }>(
      'SELECT count(*) AS lagging FROM mt_cache_members, mt_cache_epoch WHERE acked < epoch AND lease_until > now()',
    );
    expect(rows[0].lagging).toBe('0');
  });

  it('a member whose LISTEN connection stalls reads through within the lease, holds a write at most L, and is live again after', async () => {
    const proxy = await startTcpProxy();
    closing.push(() => proxy.close());
    const stalled = await member({ url: proxy.via(database.url) });
    const other = await member();
    await until(() => stalled.cache.live && other.cache.live);
    const key = await createApiKey(writer, 'default', { role: 'user' });
    await stalled.cache.sync();
    expect(await stalled.cache.authenticateApiKey(key.key)).toMatchObject({ keyId: key.id });

    proxy.freeze();
    const gone = await until(() => !stalled.cache.live);
    expect(gone).toBeLessThan(L);
    expect(stalled.lease.state().mode).toBe('read-through');
    await deleteApiKey(writer, 'default', key.id);
    const began = performance.now();
    await other.lease.settle();
    const held = performance.now() - began;
    // Its lease had ended or ends within L: the write waits for that, never longer.
    expect(held).toBeLessThan(L + 200);
    const { rows } = await writer.query<{ ended: boolean }>(
      'SELECT lease_until <= now() AS ended FROM mt_cache_members m, mt_cache_epoch e WHERE m.acked < e.epoch',
    );
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.ended)).toBe(true);
    // Reading through: the sync reads the epoch on the pool, and the deleted key is refused.
    const syncs = stalled.cache.syncs;
    await stalled.cache.sync();
    expect(stalled.cache.syncs).toBe(syncs + 1);
    expect(await stalled.cache.authenticateApiKey(key.key)).toBeUndefined();

    proxy.thaw();
    proxy.cut();
    await until(() => stalled.cache.live, 5000);
    expect(stalled.lease.state()).toEqual({ mode: 'live' });
  });

  it('a member joining while a write commits never goes live on the epoch before it (#41 item 9)', async () => {
    // The write of a key's deletion commits while the joining member's insert waits (held by a lock of the test, after
    // the join's statement began), and that write's settle answers: a member that then goes live must not serve the key.
    const other = await member();
    await until(() => other.cache.live);
    const key = await createApiKey(writer, 'default', { role: 'user' });
    const id = randomUUID();
    // The pause point: an uncommitted row under the joining member's id, so its insert waits on the unique index.
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    closing.push(() => holder.end());
    await holder.query('BEGIN');
    await holder.query(
      "INSERT INTO mt_cache_members (id, acked, lease_until, lease_ms) VALUES ($1, 0, now() + interval '1 hour', $2)",
      [id, L],
    );
    const inner = createPgDb(database.url);
    const real = await createStoreCache(inner, { secretKey });
    // The cache as it was read through before joining: it keeps the key, at the epoch before the deletion.
    await real.sync();
    expect(await real.authenticateApiKey(key.key)).toMatchObject({ keyId: key.id });
    // Each moment the lease makes the cache live, whether it would serve the deleted key with no statement.
    const servedWhenLive: boolean[] = [];
    const cache: StoreCache = Object.create(real, {
      liveUntil: {
        value(until: number) {
          real.liveUntil(until);
          if (until > performance.now()) servedWhenLive.push(real.knownApiKey(key.key) !== undefined);
        },
      },
    });
    const wakeups = await openWakeups(inner, { deadlineMs: 5000, pingMs: 200, retryMs: 100 });
    const lease = startCacheLease({ db: inner, wakeups, cache, leaseMs: L, memberId: id });
    closing.push(async () => {
      await lease.close();
      await wakeups.close();
      await real.close();
      await inner.close();
    });
    // The join waits on the test's lock.
    await until(async () => {
      const { rows } = await writer.query<{ waiting: string }>(
        "SELECT count(*)::text AS waiting FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'",
        [database.name],
      );
      return rows[0].waiting !== '0';
    });
    await deleteApiKey(writer, 'default', key.id);
    await other.lease.settle();
    // The deletion has been answered. The join goes on, and the member goes live.
    await holder.query('ROLLBACK');
    await until(() => real.live);
    expect(servedWhenLive.length).toBeGreaterThan(0);
    expect(servedWhenLive).not.toContain(true);
    await real.sync();
    expect(await real.authenticateApiKey(key.key)).toBeUndefined();
  });

  it('an idle member (no read for 4 L) ends its lease: it reads through, renews nothing and holds no write; read again, it is live', async () => {
    const m = await member();
    const other = await member();
    await until(() => m.cache.live && other.cache.live);
    const key = await createApiKey(writer, 'default', { role: 'user' });
    const leaseEnded = async () =>
      (
        await writer.query<{ ended: boolean }>(
          'SELECT lease_until <= now() AS ended FROM mt_cache_members WHERE id = $1',
          [m.lease.memberId],
        )
      ).rows[0].ended;
    // Only `other` is read from here on.
    const reading = setInterval(() => void other.cache.sync(), 50);
    try {
      await until(() => m.lease.state().mode === 'read-through', 4 * L + 1000);
      expect(m.lease.state()).toEqual({ mode: 'read-through', reason: IDLE_REASON });
      // The member reads through first, then ends its row's lease in a statement of its own (lease.ts, `rest`): the
      // row follows within moments (CI once read it in between).
      await until(leaseEnded, L);
      const idleFrom = m.lease.statements;
      await new Promise((resolve) => setTimeout(resolve, 3 * L));
      expect(m.lease.statements - idleFrom).toBe(0);
      // A write waits for no idle member: the one in use acknowledges at once.
      await deleteApiKey(writer, 'default', key.id);
      const began = performance.now();
      await other.lease.settle();
      expect(performance.now() - began).toBeLessThan(L / 2);
      // Read again: this read reads the epoch itself (the deleted key is refused), and the lease is live again.
      const syncs = m.cache.syncs;
      await m.cache.sync();
      expect(m.cache.syncs).toBe(syncs + 1);
      expect(await m.cache.authenticateApiKey(key.key)).toBeUndefined();
      await until(() => m.cache.live, L);
      expect(await leaseEnded()).toBe(false);
    } finally {
      clearInterval(reading);
    }
  });

  it('a member id already taken is not shared: the second process reads through and says why', async () => {
    const id = randomUUID();
    const first = await member({}, id);
    await until(() => first.cache.live);
    const second = await member({}, id);
    await until(() => second.lease.state().reason === 'member id in use');
    await new Promise((resolve) => setTimeout(resolve, L));
    expect([first.cache.live, second.cache.live]).toEqual([true, false]);
    const { rows } = await writer.query('SELECT 1 FROM mt_cache_members WHERE id = $1', [id]);
    expect(rows).toHaveLength(1);
  });

  it('another role can neither join nor acknowledge, and its notifications release no write', async () => {
    const proxy = await startTcpProxy();
    closing.push(() => proxy.close());
    const stalled = await member({ url: proxy.via(database.url) });
    const other = await member();
    await until(() => stalled.cache.live && other.cache.live);
    const role = `mt_forger_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: TEST_SERVER_URL });
    await admin.connect();
    await admin.query(`CREATE ROLE ${role} LOGIN`);
    const url = new URL(database.url);
    url.username = role;
    url.password = '';
    const forger = new pg.Client({ connectionString: url.toString() });
    await forger.connect();
    try {
      for (const sql of [
        `INSERT INTO mt_cache_members (id, acked, lease_until, lease_ms) VALUES ('${randomUUID()}', 0, now() + interval '1 hour', 1000)`,
        'UPDATE mt_cache_members SET acked = 1000000',
        'SELECT * FROM mt_cache_members',
      ]) {
        await expect(forger.query(sql)).rejects.toMatchObject({ code: '42501' });
      }
      // The stalled member cannot acknowledge; the forger says `cache-ack` (and anything else) all the time.
      proxy.freeze();
      const { rows: before } = await writer.query<{ id: string; acked: string }>(
        'SELECT id, acked::text FROM mt_cache_members',
      );
      await createApiKey(writer, 'default', { role: 'user' }).then((k) => deleteApiKey(writer, 'default', k.id));
      let sending = false;
      const noise = setInterval(() => {
        if (sending) return;
        sending = true;
        const payloads = ['cache-ack', 'cache', 'cache-ack:999999', '{"ack":999999}'];
        void forger
          .query("SELECT pg_notify('mt_wake', p) FROM unnest($1::text[]) p", [payloads])
          .catch(() => {})
          .finally(() => {
            sending = false;
          });
      }, 5);
      try {
        await other.lease.settle();
      } finally {
        clearInterval(noise);
      }
      // The settle answered only once the stalled member's lease had ended (the database's clock says so).
      const { rows } = await writer.query<{ ended: boolean; acked: string; id: string }>(
        'SELECT id, acked::text, lease_until <= now() AS ended FROM mt_cache_members m, mt_cache_epoch e ' +
          'WHERE m.acked < e.epoch',
      );
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.every((r) => r.ended)).toBe(true);
      // No member acknowledged an epoch it did not read: the acked values are epochs, none the forged 999999.
      const { rows: after } = await writer.query<{ acked: string; epoch: string }>(
        'SELECT acked::text, epoch::text FROM mt_cache_members, mt_cache_epoch',
      );
      expect(after.every((r) => BigInt(r.acked) <= BigInt(r.epoch))).toBe(true);
      expect(before.length).toBeGreaterThan(0);
    } finally {
      proxy.thaw();
      await forger.end();
      await admin.query(`DROP ROLE ${role}`);
      await admin.end();
    }
  });
});
