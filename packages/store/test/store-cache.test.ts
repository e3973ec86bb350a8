import { randomBytes } from 'node:crypto';
import {
  applyDeploy,
  bootstrap,
  createApiKey,
  createPgDb,
  createPgliteDb,
  createSecret,
  createStoreCache,
  type Db,
  migrate,
  rotateSecret,
  type StoreCache,
} from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleRepo } from './fixtures.js';

// The store cache keeps mutable entries only until the cache epoch moves (schema 7): each test changes the
// database through another pool, as another server (or a person with psql) would, and never tells the cache.
const secretKey = randomBytes(32);
let database: TestDatabase;
let db: Db;
let other: Db;
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

beforeAll(async () => {
  database = await createTestDatabase('mt_store_cache', { migrated: true });
  const inner = createPgDb(database.url);
  await migrate(inner);
  await bootstrap(inner, { key: `mt_${randomBytes(24).toString('base64url')}` });
  await applyDeploy(inner, 'default', sampleRepo());
  db = counting(inner);
  other = createPgDb(database.url);
  cache = await createStoreCache(db, { secretKey, secretMaxAgeMs: 60_000, now: () => clock });
});

afterAll(async () => {
  await cache?.close();
  await db?.close();
  await other?.close();
  await database?.drop();
});

describe('createStoreCache', () => {
  it('makes one statement a sync and none a cached read while nothing changed', async () => {
    await cache.sync();
    await cache.loadCallableTool('default', 'get-order');
    queries = 0;
    const syncs = cache.syncs;
    for (let i = 0; i < 5; i++) {
      await cache.sync();
      await cache.loadCallableTool('default', 'get-order');
    }
    expect([queries, cache.syncs - syncs]).toEqual([5, 5]);
  });

  it('keeps a decrypted secret no longer than its max age, and not past a rotation made elsewhere', async () => {
    const created = await createSecret(other, secretKey, 'default', { name: 'aged', value: 'first' });
    await cache.sync();
    expect((await cache.readSecretValue('default', { name: 'aged' }))?.value).toBe('first');
    queries = 0;
    expect((await cache.readSecretValue('default', { name: 'aged' }))?.value).toBe('first');
    expect(queries).toBe(0);
    // Rotated through another pool, and the clock has not moved: the read after the next sync has it.
    await rotateSecret(other, secretKey, 'default', created.id, 'second');
    await cache.sync();
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
    await cache.sync();
    const first = await cache.getVersion('default', 'tool', 'current-weather');
    expect(Object.isFrozen(first.resource)).toBe(true);
    await applyDeploy(other, 'default', sampleRepo({ weatherTool: { guidance: 'Changed guidance.' } }));
    await cache.sync();
    const latest = await cache.getVersion('default', 'tool', 'current-weather');
    expect(latest.version).toBe(first.version + 1);
    const again = await cache.getVersion('default', 'tool', 'current-weather', first.version);
    expect(again.resource).toBe(first.resource);
  });

  it('sees a version disabled and a key deleted by hand in SQL on the read after the next sync', async () => {
    const key = await createApiKey(other, 'default', { role: 'user' });
    await cache.sync();
    expect(await cache.authenticateApiKey(key.key)).toMatchObject({ keyId: key.id });
    const tool = await cache.loadCallableTool('default', 'get-order');
    await other.query(
      "UPDATE mt_resource_versions SET enabled = false WHERE namespace = 'default' AND kind = 'tool' AND name = 'get-order'",
    );
    await other.query('DELETE FROM mt_api_keys WHERE id = $1', [key.id]);
    await cache.sync();
    expect(await cache.authenticateApiKey(key.key)).toBeUndefined();
    await expect(cache.loadCallableTool('default', 'get-order')).rejects.toMatchObject({
      code: 'api:extops:version-disabled',
    });
    await other.query('UPDATE mt_resource_versions SET enabled = true WHERE namespace = $1 AND version = $2', [
      'default',
      tool.tool.version,
    ]);
    await cache.sync();
    expect((await cache.loadCallableTool('default', 'get-order')).tool.enabled).toBe(true);
  });

  it('takes an epoch observed by a statement of its own like a sync: a moved one forgets, an older one is ignored', async () => {
    await cache.sync();
    const key = await createApiKey(other, 'default', { role: 'user' });
    expect(await cache.authenticateApiKey(key.key)).toMatchObject({ keyId: key.id });
    await other.query('DELETE FROM mt_api_keys WHERE id = $1', [key.id]);
    const { rows } = await other.query<{ epoch: string }>('SELECT epoch FROM mt_cache_epoch');
    const moved = BigInt(rows[0]!.epoch);
    // An epoch read before the deletion (as a late answer would be) changes nothing: the key is still kept.
    cache.observe(moved - 1n);
    const before = queries;
    expect(await cache.authenticateApiKey(key.key)).toMatchObject({ keyId: key.id });
    expect(queries).toBe(before);
    // The epoch after it, observed without a statement of the cache's own: the key is read again, and is gone.
    cache.observe(moved);
    expect(queries).toBe(before);
    expect(await cache.authenticateApiKey(key.key)).toBeUndefined();
    expect(queries).toBe(before + 1);
  });
});

describe('createStoreCache on PGlite', () => {
  it('reads the epoch only after a statement that may have written, and then sees the change', async () => {
    const lite = await createPgliteDb();
    try {
      await migrate(lite);
      await bootstrap(lite, { key: `mt_${randomBytes(24).toString('base64url')}` });
      await applyDeploy(lite, 'default', sampleRepo());
      const liteCache = await createStoreCache(lite, { secretKey });
      await liteCache.sync();
      expect((await liteCache.loadCallableTool('default', 'get-order')).tool.enabled).toBe(true);
      const syncs = liteCache.syncs;
      for (let i = 0; i < 3; i++) await liteCache.sync();
      expect(liteCache.syncs - syncs).toBe(0);
      // A change by hand through the same database, told to no cache.
      await lite.query("UPDATE mt_resource_versions SET enabled = false WHERE kind = 'tool' AND name = 'get-order'");
      await liteCache.sync();
      expect(liteCache.syncs - syncs).toBe(1);
      await expect(liteCache.loadCallableTool('default', 'get-order')).rejects.toMatchObject({
        code: 'api:extops:version-disabled',
      });
    } finally {
      await lite.close();
    }
  });
});
