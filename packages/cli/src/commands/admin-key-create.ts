import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { createAdminKey } from '@maitento/server';
import { cliErrors } from '../errors.js';
import { CommandExit, printJson, reportError } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

interface AdminKeyFlags {
  namespace: string;
  name?: string;
  data?: string;
  json?: boolean;
}

/**
 * `mt admin-key-create`: makes an admin key straight in the database (DATABASE_URL, else the PGlite
 * `--data` folder), for an operator who has the database but no admin key left.
 */
export const register: RegisterCommand = (program, io) => {
  program
    .command('admin-key-create')
    .description("Create an admin key directly in the database, with no server and no key (an operator's way back in)")
    .option('--namespace <name>', 'the namespace the key is for', 'default')
    .option('--name <name>', 'a label to recognise the key by', 'admin-key-create')
    .option(
      '--data <dir>',
      'the PGlite data folder of `mt serve --data` when DATABASE_URL is not set (default .maitento/data)',
    )
    .option('--json', 'print { namespace, key } as JSON')
    .addHelpText(
      'after',
      `
It needs what the server needs to reach its database, not an API key: whoever can write to the database
can already do anything. The key is printed once on stdout. A PGlite folder is locked while \`mt serve\`
uses it, so stop the server first; with PostgreSQL the server may keep running.

Environment:
  DATABASE_URL      PostgreSQL connection string; without it the PGlite folder (--data) is used`,
    )
    .action(async (flags: AdminKeyFlags) => {
      const databaseUrl = process.env.DATABASE_URL || undefined;
      const dataDir = flags.data ?? '.maitento/data';
      let created: Awaited<ReturnType<typeof createAdminKey>>;
      try {
        // A wrong --data would otherwise make a new, empty database there.
        if (!databaseUrl && !existsSync(join(dataDir, 'pglite'))) {
          throw cliErrors.create('api:cli:data-not-found', { dir: dataDir });
        }
        const server = await import('@maitento/server');
        created = await server.createAdminKey({ databaseUrl, dataDir, namespace: flags.namespace, name: flags.name });
      } catch (error) {
        throw new CommandExit(reportError(io, error, flags.json));
      }
      if (flags.json) {
        printJson(io, { namespace: created.namespace, key: created.key });
        return;
      }
      io.out(created.key);
      const where = databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${dataDir}`;
      io.err(
        created.bootstrapped
          ? `the database was empty: created namespace "default" and its first admin key (data: ${where}); the key went to standard output, only this once: keep it`
          : `created an admin key of namespace "${created.namespace}" (data: ${where}); the key went to standard output, only this once: keep it`,
      );
    });
};
