import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { runMigrations } from '@maitento/server';
import { cliErrors } from '../errors.js';
import { CommandExit, printJson, reportError } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

interface MigrateFlags {
  check?: boolean;
  databaseUrl?: string;
  grantRuntime?: string;
  data?: string;
  json?: boolean;
}

/**
 * `mt migrate`: applies the database migrations (Maitento's and the run queue's) explicitly, as the role that owns the
 * schema; `--check` changes nothing and exits non-zero when something is pending or the schema is too new.
 */
export const register: RegisterCommand = (program, io) => {
  program
    .command('migrate')
    .description("Apply the database's migrations (as the schema's owner), or check that none is pending")
    .option('--check', 'change nothing: exit non-zero when a migration is pending or the schema is too new (CI/CD)')
    .option('--database-url <url>', 'PostgreSQL as the owner role (default MT_MIGRATE_DATABASE_URL, else DATABASE_URL)')
    .option('--grant-runtime <role>', 'after migrating, grant this existing role what `mt serve` and `mt worker` need')
    .option(
      '--data <dir>',
      'the PGlite data folder of `mt serve --data` when no PostgreSQL URL is given (default .maitento/data)',
    )
    .option('--json', 'print where the schema stands as JSON')
    .addHelpText(
      'after',
      `
Migrations are forward-only, in expand and contract steps: after an expand step the previous release keeps
running and can restart; a release refuses only a schema past a contract step it does not know
(api:store:schema-newer). With MT_MIGRATE=off, \`mt serve\` and \`mt worker\` do not migrate: they check
the schema and refuse to start while a migration is pending (api:store:migrations-pending). Without
MT_MIGRATE=off every process migrates at start, as before. See docs/operations.md, "Upgrades".

Environment:
  MT_MIGRATE_DATABASE_URL  PostgreSQL as the owner role (DDL rights); default DATABASE_URL
  DATABASE_URL             PostgreSQL; without either, the PGlite folder (--data) is used`,
    )
    .action(async (flags: MigrateFlags) => {
      const databaseUrl =
        flags.databaseUrl || process.env.MT_MIGRATE_DATABASE_URL || process.env.DATABASE_URL || undefined;
      const dataDir = flags.data ?? '.maitento/data';
      let result: Awaited<ReturnType<typeof runMigrations>>;
      try {
        // A wrong --data would otherwise make a new, empty database there.
        if (!databaseUrl && !existsSync(join(dataDir, 'pglite'))) {
          throw cliErrors.create('api:cli:data-not-found', { dir: dataDir });
        }
        const server = await import('@maitento/server');
        result = await server.runMigrations({
          databaseUrl,
          dataDir,
          check: flags.check === true,
          ...(flags.grantRuntime === undefined ? {} : { grantRuntime: flags.grantRuntime }),
        });
      } catch (error) {
        throw new CommandExit(reportError(io, error, flags.json));
      }
      const { status, applied, granted } = result;
      if (flags.json) {
        printJson(io, { ...status, applied, granted: granted.length > 0 });
        return;
      }
      if (flags.check) {
        io.out(
          status.found > status.known
            ? `the schema is usable: version ${status.found}, past this release's ${status.known} by expand steps only`
            : `the schema is current: version ${status.found}, nothing pending`,
        );
        return;
      }
      io.out(
        applied.length > 0
          ? `applied migrations ${applied.join(', ')}: the schema is at version ${status.found}`
          : `nothing to apply: the schema is at version ${status.found}`,
      );
      if (flags.grantRuntime !== undefined) io.err(`granted role ${flags.grantRuntime} what a serving process needs`);
    });
};
