import { randomBytes } from 'node:crypto';
import {
  createNamespace,
  createPgDb,
  createSecret,
  type Db,
  deleteSecret,
  listSecrets,
  masterKeyId,
  migrate,
  parseSecretKey,
  readSecretValue,
  rotateSecret,
} from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let database: TestDatabase;
let db: Db;
const key = randomBytes(32);

beforeAll(async () => {
  database = await createTestDatabase('mt_store_secrets', { migrated: true });
  db = createPgDb(database.url);
  await migrate(db);
  await createNamespace(db, 'a');
  await createNamespace(db, 'b');
});

afterAll(async () => {
  await db?.close();
  await database?.drop();
});

async function rawTableText(): Promise<string> {
  const { rows } = await db.query('SELECT * FROM mt_secrets');
  return JSON.stringify(
    rows.map((row) => Object.values(row).map((v) => (Buffer.isBuffer(v) ? v.toString('latin1') : v))),
  );
}

describe('secrets', () => {
  it('stores the value encrypted: the raw table holds no plaintext, and reading decrypts it', async () => {
    const value = 'sk-live-very-secret-value-123';
    const created = await createSecret(db, key, 'a', { name: 'orders-key', value });
    expect(Object.keys(created).sort()).toEqual(['createdAt', 'id', 'name', 'updatedAt']);
    expect(await rawTableText()).not.toContain(value);
    expect(await rawTableText()).not.toContain(Buffer.from(value).toString('base64'));
    expect((await readSecretValue(db, key, 'a', { name: 'orders-key' }))?.value).toBe(value);
    expect((await readSecretValue(db, key, 'a', { id: created.id }))?.value).toBe(value);
  });

  it('rotating replaces the value with a new IV and keeps the id', async () => {
    const created = await createSecret(db, key, 'a', { name: 'rotating', value: 'first' });
    const before = await db.query<{ iv: Buffer }>('SELECT iv FROM mt_secrets WHERE id = $1', [created.id]);
    const rotated = await rotateSecret(db, key, 'a', created.id, 'second');
    expect(rotated.id).toBe(created.id);
    const after = await db.query<{ iv: Buffer }>('SELECT iv FROM mt_secrets WHERE id = $1', [created.id]);
    expect(after.rows[0].iv.equals(before.rows[0].iv)).toBe(false);
    expect((await readSecretValue(db, key, 'a', { id: created.id }))?.value).toBe('second');
  });

  it('a row moved to another namespace does not decrypt (the namespace and id are bound in)', async () => {
    const created = await createSecret(db, key, 'a', { name: 'moved', value: 'v' });
    await db.query("UPDATE mt_secrets SET namespace = 'b' WHERE id = $1", [created.id]);
    await expect(readSecretValue(db, key, 'b', { id: created.id })).rejects.toMatchObject({
      code: 'api:secrets:decrypt-failed',
    });
    await db.query('DELETE FROM mt_secrets WHERE id = $1', [created.id]);
  });

  it('a wrong key does not decrypt: the error names the master key id it lacks, never the value', async () => {
    const created = await createSecret(db, key, 'a', { name: 'wrong-key', value: 'hidden-value' });
    const error = await readSecretValue(db, randomBytes(32), 'a', { id: created.id }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'api:secrets:key-id-missing' });
    expect((error as Error).message).toContain(`master key ${masterKeyId(key)}`);
    expect(JSON.stringify(error) + String(error)).not.toContain('hidden-value');
  });

  it('another namespace neither lists, reads, rotates nor deletes a secret', async () => {
    const created = await createSecret(db, key, 'a', { name: 'private', value: 'p' });
    expect((await listSecrets(db, 'b')).map((s) => s.name)).not.toContain('private');
    expect(await readSecretValue(db, key, 'b', { id: created.id })).toBeUndefined();
    await expect(rotateSecret(db, key, 'b', created.id, 'x')).rejects.toMatchObject({ code: 'api:secrets:not-found' });
    await expect(deleteSecret(db, 'b', created.id)).rejects.toMatchObject({ code: 'api:secrets:not-found' });
    expect((await readSecretValue(db, key, 'a', { id: created.id }))?.value).toBe('p');
  });

  it('refuses a second secret of the same name', async () => {
    await createSecret(db, key, 'a', { name: 'twice', value: '1' });
    await expect(createSecret(db, key, 'a', { name: 'twice', value: '2' })).rejects.toMatchObject({
      code: 'api:secrets:exists',
    });
  });

  it('accepts MT_SECRET_KEY as hex or base64 of 32 bytes and refuses other lengths', () => {
    expect(parseSecretKey(key.toString('hex')).equals(key)).toBe(true);
    expect(parseSecretKey(key.toString('base64')).equals(key)).toBe(true);
    expect(() => parseSecretKey(randomBytes(16).toString('base64'))).toThrow(/32 bytes/);
  });
});
