import { randomBytes, randomUUID } from 'node:crypto';
import {
  createApiKey,
  createNamespace,
  createPgDb,
  createPgliteDb,
  createSecret,
  type Db,
  deleteApiKey,
  deleteSecret,
  listApiKeys,
  migrate,
  secretAccess,
} from '@maitento/store';
import { databaseDrivers } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Who may use a secret (schema 18, docs/security.md): an admin key every secret of its namespace, a user key only
// those granted to it when it was made; an id that is no secret of the namespace is no answer at all.
describe.each(databaseDrivers('mt_store_secret_access', { pg: createPgDb, pglite: createPgliteDb }))(
  'secret access on %s',
  (_name, open) => {
    let db: Db;
    let done: () => Promise<void>;
    const keys = randomBytes(32);
    let shopA: string;
    let shopB: string;
    let elsewhere: string;

    beforeAll(async () => {
      ({ db, done } = await open());
      await migrate(db);
      await createNamespace(db, 'shops');
      await createNamespace(db, 'other');
      shopA = (await createSecret(db, keys, 'shops', { name: 'shop-a', value: 'a' })).id;
      shopB = (await createSecret(db, keys, 'shops', { name: 'shop-b', value: 'b' })).id;
      elsewhere = (await createSecret(db, keys, 'other', { name: 'shop-a', value: 'x' })).id;
    });
    afterAll(async () => {
      await done?.();
    });

    it('an admin key uses every secret of its namespace, a user key only those granted, no key none', async () => {
      const admin = await createApiKey(db, 'shops', { role: 'admin' });
      const user = await createApiKey(db, 'shops', { role: 'user', secrets: [shopA.toUpperCase()] });
      expect(user.secrets).toEqual([shopA]);
      const missing = randomUUID();
      const ids = [shopA, shopB, elsewhere, missing];
      expect(await secretAccess(db, 'shops', admin.id, ids)).toEqual(
        new Map([
          [shopA, true],
          [shopB, true],
        ]),
      );
      expect(await secretAccess(db, 'shops', user.id, ids)).toEqual(
        new Map([
          [shopA, true],
          [shopB, false],
        ]),
      );
      for (const nobody of [null, 'platform-token', randomUUID()]) {
        expect(await secretAccess(db, 'shops', nobody, ids)).toEqual(
          new Map([
            [shopA, false],
            [shopB, false],
          ]),
        );
      }
      // Another namespace's admin uses none of these.
      const otherAdmin = await createApiKey(db, 'other', { role: 'admin' });
      expect(await secretAccess(db, 'shops', otherAdmin.id, ids)).toEqual(
        new Map([
          [shopA, false],
          [shopB, false],
        ]),
      );
      const listed = (await listApiKeys(db, 'shops')).find((k) => k.id === user.id);
      expect(listed?.secrets).toEqual([shopA]);
    });

    it("a grant of another namespace's secret, or of none, stores no key", async () => {
      const before = (await listApiKeys(db, 'shops')).length;
      for (const bad of [elsewhere, randomUUID(), 'shop-a']) {
        await expect(createApiKey(db, 'shops', { role: 'user', secrets: [shopA, bad] })).rejects.toMatchObject({
          code: 'api:secrets:not-found',
        });
      }
      expect((await listApiKeys(db, 'shops')).length).toBe(before);
    });

    it('a grant goes with its secret and with its key', async () => {
      const temporary = (await createSecret(db, keys, 'shops', { name: 'temporary', value: 't' })).id;
      const user = await createApiKey(db, 'shops', { role: 'user', secrets: [temporary, shopB] });
      await deleteSecret(db, 'shops', temporary);
      expect((await listApiKeys(db, 'shops')).find((k) => k.id === user.id)?.secrets).toEqual([shopB]);
      await deleteApiKey(db, 'shops', user.id);
      expect(await secretAccess(db, 'shops', user.id, [shopB])).toEqual(new Map([[shopB, false]]));
    });
  },
);
