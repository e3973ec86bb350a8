import { createPgDb, createPgliteDb, type Db } from '@maitento/store';
import { createTestDatabase } from '@maitento/testkit';

/** A store under test: its database, and how to close (and drop) it. */
export type OpenedBackend = { db: Db; done(): Promise<void> };

/**
 * The two databases the store runs on, for `describe.each`: PostgreSQL (a database of its own, `name`, dropped at the
 * end) and PGlite (in memory). Each opens unmigrated-by-us: the test migrates.
 */
export function bothBackends(name: string): [string, () => Promise<OpenedBackend>][] {
  return [
    [
      'PostgreSQL',
      async () => {
        const database = await createTestDatabase(name, { migrated: true });
        const db = createPgDb(database.url);
        return {
          db,
          async done() {
            await db.close();
            await database.drop();
          },
        };
      },
    ],
    [
      'PGlite',
      async () => {
        const db = await createPgliteDb();
        return { db, done: () => db.close() };
      },
    ],
  ];
}
