import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from './database.js';
import { copyPgliteTemplate } from './pglite-template.js';

/** A database a test opened, and how to close and remove it. */
export interface OpenedDatabase<D> {
  db: D;
  done: () => Promise<void>;
}

/**
 * The two databases a test runs on, for `describe.each`: a fresh PostgreSQL test database, and PGlite in a
 * temporary folder copied from the migrated template. `open` makes the store's handle of each (the testkit does
 * not import the store: `{ pg: createPgDb, pglite: createPgliteDb }`).
 */
export function databaseDrivers<D extends { close(): Promise<void> }>(
  prefix: string,
  open: { pg: (url: string) => D; pglite: (dir: string) => Promise<D> },
): [string, () => Promise<OpenedDatabase<D>>][] {
  return [
    [
      'PostgreSQL',
      async () => {
        const database = await createTestDatabase(prefix);
        const db = open.pg(database.url);
        return {
          db,
          done: async () => {
            await db.close();
            await database.drop();
          },
        };
      },
    ],
    [
      'PGlite',
      async () => {
        const dir = mkdtempSync(join(tmpdir(), `${prefix.replaceAll('_', '-')}-`));
        await copyPgliteTemplate(join(dir, 'db'));
        const db = await open.pglite(join(dir, 'db'));
        return {
          db,
          done: async () => {
            await db.close();
            rmSync(dir, { recursive: true, force: true });
          },
        };
      },
    ],
  ];
}
