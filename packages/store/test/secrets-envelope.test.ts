import { randomBytes, randomUUID } from 'node:crypto';
import {
  checkSecretKeys,
  claimIdempotencyKey,
  completeIdempotencyKey,
  createKeyring,
  createNamespace,
  createPgDb,
  createSecret,
  type Db,
  issuePlatformToken,
  masterKeyId,
  migrate,
  readSecretValue,
  rotateSecret,
  rotateSecretKeys,
  verifyPlatformToken,
} from '@maitento/store';
import { seal } from '../src/secrets/cipher.js';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

let database: TestDatabase;
let db: Db;
const oldKey = randomBytes(32);
const newKey = randomBytes(32);

beforeAll(async () => {
  database = await createTestDatabase('mt_store_envelope', { migrated: true });
  db = createPgDb(database.url);
  await migrate(db);
  await createNamespace(db, 'a');
  await createNamespace(db, 'b');
});

afterAll(async () => {
  await db?.close();
  await database?.drop();
});

beforeEach(async () => {
  await db.query('DELETE FROM mt_secrets');
});

interface StoredRow {
  id: string;
  key_id: string | null;
  wrapped_key: Buffer | null;
  iv: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

async function row(id: string): Promise<StoredRow> {
  const { rows } = await db.query<StoredRow>(
    'SELECT id, key_id, wrapped_key, iv, ciphertext, tag FROM mt_secrets WHERE id = $1',
    [id],
  );
  return rows[0];
}

function flip(bytes: Buffer, at = 0): Buffer {
  const copy = Buffer.from(bytes);
  copy[at] ^= 0x01;
  return copy;
}

describe('envelope encryption', () => {
  it('stores each value under its own data key, wrapped under the master key whose id is stored beside it', async () => {
    const one = await createSecret(db, oldKey, 'a', { name: 'one', value: 'same-value' });
    const two = await createSecret(db, oldKey, 'a', { name: 'two', value: 'same-value' });
    const [r1, r2] = [await row(one.id), await row(two.id)];
    expect(r1.key_id).toBe(masterKeyId(oldKey));
    expect(r1.key_id).toMatch(/^[0-9a-f]{8}$/);
    expect(r1.wrapped_key).toHaveLength(60);
    // Two data keys: the same value under the same master key gives unrelated wrapped keys and ciphertexts.
    expect(r1.wrapped_key!.equals(r2.wrapped_key!)).toBe(false);
    expect(r1.ciphertext.equals(r2.ciphertext)).toBe(false);
    expect((await readSecretValue(db, oldKey, 'a', { id: one.id }))?.value).toBe('same-value');
  });

  it.each([
    ['the ciphertext', 'ciphertext'],
    ['the tag', 'tag'],
    ['the IV', 'iv'],
    ['the wrapped data key', 'wrapped_key'],
  ] as const)('a changed byte of %s fails loudly with api:secrets:decrypt-failed', async (_what, column) => {
    const created = await createSecret(db, oldKey, 'a', { name: `t-${column}`, value: 'tamper-me-value' });
    const stored = await row(created.id);
    await db.query(`UPDATE mt_secrets SET ${column} = $2 WHERE id = $1`, [created.id, flip(stored[column]!)]);
    const error = await readSecretValue(db, oldKey, 'a', { id: created.id }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'api:secrets:decrypt-failed' });
    expect(String((error as Error).message)).toContain(created.id);
    expect(JSON.stringify(error) + String(error)).not.toContain('tamper-me-value');
  });

  it('a key id changed in place, or a wrapped key or value moved to another row, does not open', async () => {
    const one = await createSecret(db, oldKey, 'a', { name: 'one', value: 'value-one' });
    const two = await createSecret(db, oldKey, 'a', { name: 'two', value: 'value-two' });
    const r1 = await row(one.id);
    // The wrapped key of one with the value of two: the data key's AAD names secret one.
    await db.query('UPDATE mt_secrets SET wrapped_key = $2 WHERE id = $1', [two.id, r1.wrapped_key]);
    await expect(readSecretValue(db, oldKey, 'a', { id: two.id })).rejects.toMatchObject({
      code: 'api:secrets:decrypt-failed',
    });
    // Value and wrapped key of one copied whole onto two.
    await db.query('UPDATE mt_secrets SET iv = $2, ciphertext = $3, tag = $4 WHERE id = $1', [
      two.id,
      r1.iv,
      r1.ciphertext,
      r1.tag,
    ]);
    await expect(readSecretValue(db, oldKey, 'a', { id: two.id })).rejects.toMatchObject({
      code: 'api:secrets:decrypt-failed',
    });
    // The key id of one relabelled as another key the reader holds: the wrapped key's AAD names the real id.
    await db.query('UPDATE mt_secrets SET key_id = $2 WHERE id = $1', [one.id, masterKeyId(newKey)]);
    await expect(readSecretValue(db, createKeyring(oldKey, [newKey]), 'a', { id: one.id })).rejects.toMatchObject({
      code: 'api:secrets:decrypt-failed',
    });
  });

  it('a row moved to another namespace or id does not open there', async () => {
    const created = await createSecret(db, oldKey, 'a', { name: 'mover', value: 'moving-value' });
    await db.query("UPDATE mt_secrets SET namespace = 'b' WHERE id = $1", [created.id]);
    await expect(readSecretValue(db, oldKey, 'b', { name: 'mover' })).rejects.toMatchObject({
      code: 'api:secrets:decrypt-failed',
    });
    const other = randomUUID();
    await db.query("UPDATE mt_secrets SET namespace = 'a', id = $2 WHERE id = $1", [created.id, other]);
    await expect(readSecretValue(db, oldKey, 'a', { id: other })).rejects.toMatchObject({
      code: 'api:secrets:decrypt-failed',
    });
  });

  it("rotating a secret's value seals it under a new data key and the current master key", async () => {
    const created = await createSecret(db, oldKey, 'a', { name: 'r', value: 'first' });
    const before = await row(created.id);
    const ring = createKeyring(newKey, [oldKey]);
    await rotateSecret(db, ring, 'a', created.id, 'second');
    const after = await row(created.id);
    expect(after.key_id).toBe(masterKeyId(newKey));
    expect(after.wrapped_key!.equals(before.wrapped_key!)).toBe(false);
    expect((await readSecretValue(db, newKey, 'a', { id: created.id }))?.value).toBe('second');
  });
});

describe('master key rotation', () => {
  async function seed(n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      ids.push((await createSecret(db, oldKey, i % 2 ? 'a' : 'b', { name: `s${i}`, value: `value-${i}` })).id);
    }
    return ids;
  }

  async function valuesWith(keys: Parameters<typeof readSecretValue>[1], ids: string[]): Promise<string[]> {
    const out: string[] = [];
    for (const [i, id] of ids.entries()) {
      out.push((await readSecretValue(db, keys, i % 2 ? 'a' : 'b', { id }))!.value);
    }
    return out;
  }

  it('re-wraps every data key under the new key without touching values; a crash mid-way resumes', async () => {
    const ids = await seed(7);
    const values = ids.map((_, i) => `value-${i}`);
    const valueColumns = async () =>
      (await db.query<{ v: string }>("SELECT encode(iv || ciphertext || tag, 'hex') AS v FROM mt_secrets ORDER BY id"))
        .rows;
    const untouched = await valueColumns();
    const ring = createKeyring(newKey, [oldKey]);

    // The first run "crashes" after its second batch of 2.
    const crash = new Error('crash');
    await expect(
      rotateSecretKeys(db, ring, {
        batchSize: 2,
        afterBatch: (done) => {
          if (done.batches === 2) throw crash;
        },
      }),
    ).rejects.toBe(crash);
    const counts = await checkSecretKeys(db, ring);
    expect(counts.secretsByKeyId).toEqual({ [masterKeyId(newKey)]: 4, [masterKeyId(oldKey)]: 3 });
    // During the rotation a reader with both keys opens every row, whichever key it is under.
    expect(await valuesWith(ring, ids)).toEqual(values);

    // Run again: the 4 rows already under the new key are skipped, the 3 others re-wrapped.
    const resumed = await rotateSecretKeys(db, ring, { batchSize: 2 });
    expect(resumed).toEqual({ keyId: masterKeyId(newKey), rewrapped: 3, converted: 0, batches: 2 });
    expect(await rotateSecretKeys(db, ring)).toMatchObject({ rewrapped: 0, batches: 0 });
    expect(await valueColumns()).toEqual(untouched);

    // The old key can now be retired: the new key alone opens everything, the old alone nothing.
    expect(await valuesWith(newKey, ids)).toEqual(values);
    const check = await checkSecretKeys(db, ring);
    expect(check.unusedPreviousKeyIds).toEqual([masterKeyId(oldKey)]);
    await expect(readSecretValue(db, oldKey, 'b', { id: ids[0] })).rejects.toMatchObject({
      code: 'api:secrets:key-id-missing',
    });
  });

  it('stops with api:secrets:key-id-missing, naming the id, when a row is under a key it was not given', async () => {
    await seed(2);
    const stranger = randomBytes(32);
    const error = await rotateSecretKeys(db, createKeyring(newKey, [stranger])).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'api:secrets:key-id-missing' });
    expect((error as Error).message).toContain(masterKeyId(oldKey));
    // Nothing was half-done: the batch rolled back.
    expect((await checkSecretKeys(db, oldKey)).secretsByKeyId).toEqual({ [masterKeyId(oldKey)]: 2 });
  });
});

describe('the startup check', () => {
  it('refuses keys that miss a stored key id, and names it', async () => {
    await createSecret(db, oldKey, 'a', { name: 'x', value: 'v' });
    const error = await checkSecretKeys(db, newKey).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'api:secrets:key-id-missing' });
    expect((error as Error).message).toBe(
      `Stored secrets are encrypted under master key ${masterKeyId(oldKey)}, which this server was not given (it has ${masterKeyId(newKey)})`,
    );
    expect(await checkSecretKeys(db, createKeyring(newKey, [oldKey]))).toMatchObject({
      currentKeyId: masterKeyId(newKey),
      secretsByKeyId: { [masterKeyId(oldKey)]: 1 },
      converted: 0,
      unusedPreviousKeyIds: [],
    });
  });

  it('converts legacy rows (sealed straight under MT_SECRET_KEY) to envelopes, and refuses one no key opens', async () => {
    const id = randomUUID();
    const legacy = seal(oldKey, 'a', id, 'legacy-value');
    await db.query(
      'INSERT INTO mt_secrets (id, namespace, name, iv, ciphertext, tag) VALUES ($1, $2, $3, $4, $5, $6)',
      [id, 'a', 'legacy', legacy.iv, legacy.ciphertext, legacy.tag],
    );
    // Read lazily before the conversion.
    expect((await readSecretValue(db, oldKey, 'a', { id }))?.value).toBe('legacy-value');
    await expect(checkSecretKeys(db, newKey)).rejects.toMatchObject({ code: 'api:secrets:decrypt-failed' });
    expect((await row(id)).key_id).toBeNull();

    const check = await checkSecretKeys(db, oldKey);
    expect(check).toMatchObject({ converted: 1, secretsByKeyId: { [masterKeyId(oldKey)]: 1 } });
    expect((await row(id)).wrapped_key).toHaveLength(60);
    expect((await readSecretValue(db, oldKey, 'a', { id }))?.value).toBe('legacy-value');
  });
});

describe('other values sealed under the master key', () => {
  it('an idempotency answer sealed under the previous key still replays during the rotation', async () => {
    const scope = { namespace: 'a', apiKeyId: randomUUID(), key: 'k-1' };
    const fingerprint = Buffer.from('fp');
    const claim = await claimIdempotencyKey(db, oldKey, scope, fingerprint);
    expect(claim.kind).toBe('claimed');
    await completeIdempotencyKey(db, oldKey, scope, { status: 201, body: '{"ok":true}' });
    expect(await claimIdempotencyKey(db, createKeyring(newKey, [oldKey]), scope, fingerprint)).toEqual({
      kind: 'replay',
      answer: { status: 201, body: '{"ok":true}' },
    });
  });

  it('a platform token signed under the previous key verifies during the rotation, under no key after', () => {
    const token = issuePlatformToken(oldKey, 'a');
    expect(verifyPlatformToken(createKeyring(newKey, [oldKey]), token)).toMatchObject({ namespace: 'a' });
    expect(verifyPlatformToken(newKey, token)).toBeUndefined();
    expect(verifyPlatformToken(newKey, issuePlatformToken(createKeyring(newKey, [oldKey]), 'a'))).toMatchObject({
      namespace: 'a',
    });
  });
});
