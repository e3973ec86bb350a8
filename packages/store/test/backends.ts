import { createPgDb, createPgliteDb, type Db } from '@maitento/store';
import { createTestDatabase } from '@maitento/testkit';

/** A store under test: its database, and how to close (and drop) it. */
export type OpenedBackend = { db: Db; done(): Promise<void> };

/** A PostgreSQL database of its own for a store test, `name`, made from the migrated template and dropped by `done`. */
export async function openPostgres(name: string): Promise<OpenedBackend> {
  const database = await createTestDatabase(name, { migrated: true });
  const db = createPgDb(database.url);
  return {
    db,
    async done() {
      await db.close();
      await database.drop();
    },
  };
}

/**
 * The two databases the store runs on, for `describe.each`: PostgreSQL ({@link openPostgres}) and PGlite (in memory,
 * not migrated). The test runs `migrate`, which brings the PGlite one up to date and leaves the PostgreSQL one as it is.
 */
export function bothBackends(name: string): [string, () => Promise<OpenedBackend>][] {
  return [
    ['PostgreSQL', () => openPostgres(name)],
    [
      'PGlite',
      async () => {
        const db = await createPgliteDb();
        return { db, done: () => db.close() };
      },
    ],
  ];
}
