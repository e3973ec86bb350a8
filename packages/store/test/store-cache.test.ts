import { randomBytes } from 'node:crypto';
import {
  applyDeploy,
  bootstrap,
  createPgDb,
  createSecret,
  createStoreCache,
  type Db,
  MEMBER_PREFIX,
  migrate,
  rotateSecret,
  type StoreCache,
} from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleRepo } from './fixtures.js';

const secretKey = randomBytes(32);
let database: TestDatabase;
let db: Db;
let queries = 0;
let clock = 1_000_000;
let cache: StoreCache;

/** `db` with every statement counted. */
function counting(inner: Db): Db {
  return {
    ...inner,
    query: (text, params) => {
      queries++;
      return inner.query(text, params);
    },
  };
}

async function until(condition: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

beforeAll(async () => {
  database = await createTestDatabase('mt_store_cache');
  const inner = createPgDb(database.url);
  await migrate(inner);
  await bootstrap(inner, { key: `mt_${randomBytes(24).toString('base64url')}` });
  await applyDeploy(inner, 'default', sampleRepo());
  db = counting(inner);
  cache = await createStoreCache(db, { secretKey, secretMaxAgeMs: 60_000, now: () => clock });
});

afterAll(async () => {
  await cache?.close();
  await db?.close();
  await database?.drop();
});

describe('createStoreCache', () => {
  it('keeps a decrypted secret no longer than its max age', async () => {
    const created = await createSecret(db, secretKey, 'default', { name: 'aged', value: 'first' });
    expect((await cache.readSecretValue('default', { name: 'aged' }))?.value).toBe('first');
    queries = 0;
    expect((await cache.readSecretValue('default', { name: 'aged' }))?.value).toBe('first');
    expect(queries).toBe(0);
    // Rotated as a server rotates (the write, then `changed`), and the clock has not moved: the next read has it.
    await rotateSecret(db, secretKey, 'default', created.id, 'second');
    await cache.changed({ kind: 'secret', namespace: 'default', id: created.id });
    expect((await cache.readSecretValue('default', { name: 'aged' }))?.value).toBe('second');
    queries = 0;
    clock += 59_999;
    await cache.readSecretValue('default', { name: 'aged' });
    expect(queries).toBe(0);
    clock += 2;
    await cache.readSecretValue('default', { name: 'aged' });
    expect(queries).toBe(1);
  });

  it('returns the same frozen resource object for a version, also after a deploy moved latest on', async () => {
    const first = await cache.getVersion('default', 'tool', 'current-weather');
    expect(Object.isFrozen(first.resource)).toBe(true);
    await applyDeploy(db, 'default', sampleRepo({ weatherTool: { guidance: 'Changed guidance.' } }));
    await cache.changed({ kind: 'resources', namespace: 'default' });
    const latest = await cache.getVersion('default', 'tool', 'current-weather');
    expect(latest.version).toBe(first.version + 1);
    const again = await cache.getVersion('default', 'tool', 'current-weather', first.version);
    expect(again.resource).toBe(first.resource);
  });

  it('reads through to the database while its LISTEN connection is lost, and caches again once it is back', async () => {
    await cache.loadCallableTool('default', 'get-order');
    queries = 0;
    await cache.loadCallableTool('default', 'get-order');
    expect(queries).toBe(0);

    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      await admin.query(
        // The LISTEN connection names itself a cache member; the pool's connections do not.
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() ' +
          `AND pid <> pg_backend_pid() AND application_name LIKE '${MEMBER_PREFIX}%'`,
      );
    } finally {
      await admin.end();
    }
    await until(() => !cache.listening);
    queries = 0;
    await cache.loadCallableTool('default', 'get-order');
    await cache.loadCallableTool('default', 'get-order');
    expect(queries).toBe(4);

    await until(() => cache.listening);
    await cache.loadCallableTool('default', 'get-order');
    queries = 0;
    await cache.loadCallableTool('default', 'get-order');
    expect(queries).toBe(0);
  });
});
