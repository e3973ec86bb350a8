// The settle protocol and the lease of listenForChanges (packages/store/src/cache/change-listener.ts), on a real
// PostgreSQL database: listeners of this process, and a member played by a raw pg connection that answers
// barriers only when the test says so (as a server whose event loop is busy, or gone silent, would).
import {
  type ChangeListener,
  CHANGE_CHANNEL,
  listenForChanges,
  MEMBER_PREFIX,
  SETTLE_CHANNEL,
  type StoreChange,
} from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

let database: TestDatabase;
let admin: pg.Client;
const opened: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  database = await createTestDatabase('mt_change_listener');
  admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
});

afterEach(async () => {
  for (const item of opened.splice(0)) await item.close();
  // A closed member's backend leaves pg_stat_activity a moment after its client: the next test starts without it.
  await until(async () => {
    const { rows } = await admin.query(
      'SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE $1',
      [`${MEMBER_PREFIX}%`],
    );
    return rows.length === 0;
  });
});

afterAll(async () => {
  await admin?.end();
  await database?.drop();
});

/** A listener of this process that records the changes it is told of. */
async function listener(leaseMs: number): Promise<{ listener: ChangeListener; changes: StoreChange[] }> {
  const changes: StoreChange[] = [];
  const made = await listenForChanges(
    database.url,
    { onChange: (change) => changes.push(change), onListening: () => {}, onLost: () => {} },
    { leaseMs },
  );
  opened.push(made);
  return { listener: made, changes };
}

/** A member that takes part by hand: it receives barriers and acknowledges one only through `ack`. */
async function handMember(name: string) {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const barriers: string[] = [];
  client.on('notification', (message) => {
    const payload = JSON.parse(message.payload ?? '{}');
    if (message.channel === SETTLE_CHANNEL && typeof payload.barrier === 'string') barriers.push(payload.barrier);
  });
  await client.query(`LISTEN ${SETTLE_CHANNEL}`);
  await client.query('SELECT set_config($1, $2, false)', ['application_name', `${MEMBER_PREFIX}${name}`]);
  const member = {
    barriers,
    ack: (barrier: string) =>
      client.query('SELECT pg_notify($1, $2)', [SETTLE_CHANNEL, JSON.stringify({ ack: barrier, member: name })]),
    close: () => client.end(),
  };
  opened.push(member);
  return member;
}

async function commitChange(change: StoreChange): Promise<void> {
  await admin.query('SELECT pg_notify($1, $2)', [CHANGE_CHANNEL, JSON.stringify(change)]);
}

const settledWithin = async (promise: Promise<void>, ms: number) =>
  Promise.race([promise.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

async function until(condition: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('listenForChanges: the lease', () => {
  it('makes no round trip for sync while its lease holds', async () => {
    const { listener: cache } = await listener(60_000);
    const before = cache.syncs;
    for (let i = 0; i < 20; i++) await cache.sync();
    expect(cache.leased).toBe(true);
    expect(cache.syncs).toBe(before);
  });

  it('renews its lease in the background, one round trip every quarter of it', async () => {
    const { listener: cache } = await listener(200);
    const before = cache.syncs;
    await new Promise((resolve) => setTimeout(resolve, 450));
    expect(cache.syncs - before).toBeGreaterThanOrEqual(1);
    expect(cache.leased).toBe(true);
  });

  it('does not trust itself once its event loop stalled past the lease: sync applies what was committed meanwhile', async () => {
    const { listener: cache, changes } = await listener(100);
    const change: StoreChange = { kind: 'key', namespace: 'default', id: 'stalled' };
    // Another connection commits the change; this process's loop is blocked, so the notification waits unread.
    const committed = commitChange(change);
    const until = performance.now() + 250;
    while (performance.now() < until) {
      // A busy event loop: no timer (renewal) and no socket (notification) is served.
    }
    expect(cache.leased).toBe(false);
    const before = cache.syncs;
    await cache.sync();
    expect(changes).toContainEqual(change);
    expect(cache.syncs - before).toBe(1);
    await committed;
  });
});

describe('listenForChanges: settle', () => {
  it('with no other member, resolves promptly, with the change committed before it applied here', async () => {
    const { listener: only, changes } = await listener(60_000);
    const change: StoreChange = { kind: 'resources', namespace: 'alone' };
    await commitChange(change);
    expect(await settledWithin(only.settle(), 1000)).toBe(true);
    expect(changes).toContainEqual(change);
  });

  it('waits until every other member has acknowledged a barrier sent after the change', async () => {
    const { listener: writer } = await listener(60_000);
    const slow = await handMember('slow-member');
    await commitChange({ kind: 'resources', namespace: 'default' });
    const settling = writer.settle();
    await until(() => slow.barriers.length === 1);
    // The member has not acknowledged: the writer does not answer yet.
    expect(await settledWithin(settling, 300)).toBe(false);
    await slow.ack(slow.barriers[0]!);
    expect(await settledWithin(settling, 2000)).toBe(true);
  });

  it('waits for a member that never answers no longer than its lease can last', async () => {
    const { listener: writer } = await listener(300);
    const silent = await handMember('silent-member');
    const began = performance.now();
    await writer.settle();
    const waited = performance.now() - began;
    expect(silent.barriers).toHaveLength(1);
    // leaseMs * 1.1 + 10: the member's lease, had it been renewed just before the change, has run out.
    expect(waited).toBeGreaterThanOrEqual(330);
    expect(waited).toBeLessThan(3000);
  });
});
