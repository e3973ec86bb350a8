import { type AuditContext, createPgDb, type Db, listAudit, recordAudit } from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The audit log's store (docs/audit.md): a row goes with its transaction, rows are never updated, and pages follow
// each other without a gap or a repeat. The routes' rows are tested end to end in test/e2e/audit.test.ts.
let database: TestDatabase;
let db: Db;

const AS: AuditContext = {
  actor: { kind: 'key', keyId: '00000000-0000-4000-8000-000000000001', role: 'admin', via: 'api' },
  requestId: 'req-1',
};

beforeAll(async () => {
  database = await createTestDatabase('mt_store_audit', { migrated: true });
  db = createPgDb(database.url);
});

afterAll(async () => {
  await db?.close();
  await database?.drop();
});

const entry = (namespace: string, n: number) => ({
  ...AS,
  namespace,
  action: 'secret.rotated' as const,
  target: { kind: 'secret', id: `s-${n}` },
  after: { name: `s-${n}` },
});

describe('the audit log in the store', () => {
  it('writes a row only when its transaction commits', async () => {
    await expect(
      db.transaction(async (tx) => {
        await recordAudit(tx, entry('rolled-back', 1));
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect((await listAudit(db, 'rolled-back')).entries).toEqual([]);
    await db.transaction((tx) => recordAudit(tx, entry('committed', 1)));
    expect((await listAudit(db, 'committed')).entries).toHaveLength(1);
  });

  it('refuses to update a row (append-only)', async () => {
    await expect(db.query("UPDATE mt_audit SET action = 'key.created'")).rejects.toThrow(/append-only/);
  });

  it('pages newest first, each row once, and filters by action prefix', async () => {
    for (let n = 0; n < 7; n++) await db.transaction((tx) => recordAudit(tx, entry('paged', n)));
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const got = await listAudit(db, 'paged', { limit: 3, ...(cursor ? { cursor } : {}) });
      seen.push(...got.entries.map((e) => e.target.id));
      if (got.nextCursor === null) break;
      cursor = got.nextCursor;
    }
    expect(seen).toEqual(['s-6', 's-5', 's-4', 's-3', 's-2', 's-1', 's-0']);
    expect((await listAudit(db, 'paged', { action: 'secret' })).entries).toHaveLength(7);
    expect((await listAudit(db, 'paged', { action: 'key' })).entries).toHaveLength(0);
    expect((await listAudit(db, 'paged', { target: 'secret:s-3' })).entries).toHaveLength(1);
    await expect(listAudit(db, 'paged', { cursor: 'bm9wZQ' })).rejects.toMatchObject({
      code: 'api:audit:cursor-invalid',
    });
  });
});
