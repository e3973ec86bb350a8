import { type Db, storeErrors } from '@maitento/store';
import { PgBoss } from 'pg-boss';

/**
 * pg-boss on `db` for its schema alone: no supervisor, no cron, no registry row, statements through `db`'s own
 * connections (TLS and deadlines as the store has them). `migrate` is pg-boss's documented option: true, `start()`
 * creates or migrates its schema; false, `start()` only checks that the schema is installed and current.
 */
function schemaBoss(db: Db, migrate: boolean): PgBoss {
  const boss = new PgBoss({
    db: { executeSql: (text, values) => db.executeSql(text, values) },
    ...(db.driver === 'pglite' ? { backend: 'pglite' as const } : {}),
    migrate,
    supervise: false,
    schedule: false,
    registerInstance: false,
  });
  // Failures surface from start(); nothing runs after stop().
  boss.on('error', () => {});
  return boss;
}

/**
 * Creates or migrates pg-boss's schema (the run queue's tables) through pg-boss's own `start()`, then stops it: what
 * `mt migrate` runs as the owner role, so a serving process started with `MT_MIGRATE=off` needs no DDL right.
 * Safe beside other processes doing the same (pg-boss serialises its schema changes under its advisory lock).
 */
export async function migrateRunQueueSchema(db: Db, deadlineMs = 600_000): Promise<void> {
  const boss = schemaBoss(db, true);
  await boss.start();
  try {
    // A migration between pg-boss versions may leave index builds to its background migrator ("bam"), which runs
    // them from start() on: wait for them here, as the owner, so no serving process (a role without DDL rights) is
    // left to run them. Bounded: past the deadline `mt migrate` fails and can be run again.
    const until = Date.now() + deadlineMs;
    for (;;) {
      const open = (await boss.getBamStatus())
        .filter((row) => row.status === 'pending' || row.status === 'in_progress')
        .reduce((sum, row) => sum + Number(row.count), 0);
      if (open === 0) break;
      if (Date.now() >= until) {
        throw storeErrors.create('api:store:migrations-pending', {
          pending: `the run queue's schema (pg-boss): ${open} index builds still running after ${deadlineMs} ms; run \`mt migrate\` again`,
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  } finally {
    await boss.stop({ graceful: false, close: false });
  }
}

/**
 * Whether pg-boss's schema is installed and at the version this release's pg-boss uses, with no DDL: refuses with
 * `api:store:migrations-pending` (naming pg-boss's schema) when it is not, so `mt migrate --check` and a process
 * started with `MT_MIGRATE=off` say "run `mt migrate`" rather than fail on a missing table later.
 */
export async function checkRunQueueSchema(db: Db): Promise<void> {
  const boss = schemaBoss(db, false);
  const pending = (reason: string) =>
    storeErrors.create('api:store:migrations-pending', { pending: `the run queue's schema (pg-boss): ${reason}` });
  if (!(await boss.isInstalled())) throw pending('not installed');
  try {
    await boss.start();
  } catch (error) {
    throw pending(error instanceof Error ? error.message : String(error));
  }
  await boss.stop({ graceful: false, close: false });
}
