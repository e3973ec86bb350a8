import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { pruneRuns } from '@maitento/server';
import { cliErrors } from '../errors.js';
import { CommandExit, printJson, reportError } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

interface RunsPruneFlags {
  before: string;
  data?: string;
  json?: boolean;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** `--before`: a calendar date (midnight UTC) or an ISO 8601 time with its offset; anything else is refused. */
export function parseBefore(value: string): Date {
  return parseDateFlag(value, '--before');
}

/** A date flag (`flag`): a calendar date (midnight UTC) or an ISO 8601 time with its offset; else api:cli:date-invalid. */
export function parseDateFlag(value: string, flag: string): Date {
  const text = value.trim();
  const date = DATE.test(text) ? new Date(`${text}T00:00:00Z`) : TIME.test(text) ? new Date(text) : undefined;
  // A day that does not exist (2026-02-30) is refused, not rolled over to March as Date would.
  const day = text.slice(0, 10);
  const real = new Date(`${day}T00:00:00Z`);
  if (date === undefined || Number.isNaN(date.getTime()) || real.toISOString().slice(0, 10) !== day) {
    throw cliErrors.create('api:cli:date-invalid', { flag, value: JSON.stringify(value) });
  }
  return date;
}

/**
 * `mt runs-prune --before DATE`: deletes, straight in the database, the runs (each with its whole tree, events and
 * approvals) and the approvals made outside a run that ended before DATE, as the retention job does.
 */
export const register: RegisterCommand = (program, io) => {
  program
    .command('runs-prune')
    .description('Delete runs and approvals that ended before a date, directly in the database (what retention does)')
    .requiredOption('--before <date>', 'delete what ended before this date (YYYY-MM-DD, midnight UTC) or ISO 8601 time')
    .option(
      '--data <dir>',
      'the PGlite data folder of `mt serve --data` when DATABASE_URL is not set (default .maitento/data)',
    )
    .option('--json', 'print what was deleted as JSON')
    .addHelpText(
      'after',
      `
Only runs that ended (Completed, Failed, Cancelled) and whose every child run ended are deleted, with their
events, approvals and child runs; a run that is Running or waits for a person or a message is kept, whatever
its age. Expired Idempotency-Keys and console sessions go too. It deletes in batches of 200 rows, each its
own short transaction, so servers and workers may keep running. Like \`mt admin-key-create\`, it needs the
database, not an API key. MT_RETENTION_DAYS makes servers and workers do the same every hour.

Environment:
  DATABASE_URL      PostgreSQL connection string; without it the PGlite folder (--data) is used`,
    )
    .action(async (flags: RunsPruneFlags) => {
      const databaseUrl = process.env.DATABASE_URL || undefined;
      const dataDir = flags.data ?? '.maitento/data';
      let pruned: Awaited<ReturnType<typeof pruneRuns>>;
      try {
        const before = parseBefore(flags.before);
        if (!databaseUrl && !existsSync(join(dataDir, 'pglite'))) {
          throw cliErrors.create('api:cli:data-not-found', { dir: dataDir });
        }
        const server = await import('@maitento/server');
        pruned = await server.pruneRuns({ databaseUrl, dataDir, before });
      } catch (error) {
        throw new CommandExit(reportError(io, error, flags.json));
      }
      const { runs, approvals, idempotencyKeys, consoleSessions, connectLinks, batches } = pruned;
      if (flags.json) {
        printJson(io, { runs, approvals, idempotencyKeys, consoleSessions, connectLinks, batches });
        return;
      }
      io.out(
        `deleted ${runs} runs (with their child runs, events and approvals), ${approvals} approvals made outside a run, ` +
          `${idempotencyKeys} expired idempotency keys, ${consoleSessions} ended console sessions and ${connectLinks} ` +
          `expired connect links in ${batches} batches`,
      );
    });
};
