import { InvalidArgumentError } from 'commander';
import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { formatTable } from '../internal/table.js';
import type { RegisterCommand } from './index.js';
import { parseDateFlag } from './runs-prune.js';

function parseLimit(value: string): number {
  if (!/^[1-9][0-9]*$/.test(value) || Number(value) > 1000)
    throw new InvalidArgumentError('a whole number from 1 to 1000');
  return Number(value);
}

interface AuditFlags extends ApiFlags {
  jsonl?: boolean;
  since?: string;
  until?: string;
  action?: string;
  actor?: string;
  target?: string;
  limit?: number;
  cursor?: string;
}

/**
 * `mt audit [--since DATE] [--until DATE] [--action A] [--actor ID] [--target T] [--json | --jsonl]`: the audit log
 * of the key's namespace (an admin key), newest first a page at a time, or every row as JSON Lines.
 */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('audit')
    .description('List the audit log of the namespace (admin key): who changed what, when; --jsonl exports it')
    .option('--since <date>', 'only rows at or after this date (YYYY-MM-DD, midnight UTC) or ISO 8601 time')
    .option('--until <date>', 'only rows before this date (YYYY-MM-DD, midnight UTC) or ISO 8601 time')
    .option('--action <action>', 'only this action, or every action it starts (secret: secret.created, ...)')
    .option('--actor <id>', 'only rows of this key id, or system')
    .option('--target <target>', 'only rows about this target: its id or name, or kind:id (tool:refund-order@2)')
    .option('--limit <n>', 'at most this many a page (default 100, at most 1000)', parseLimit)
    .option('--cursor <cursor>', 'the next page, as the previous page printed')
    .option('--jsonl', 'print every matching row, oldest first, one JSON object a line (the export; no paging)');
  addJsonOption(addConnectionOptions(command)).action(async (flags: AuditFlags) => {
    await withClient(io, flags, async (client) => {
      const filters = {
        ...(flags.since === undefined ? {} : { since: parseDateFlag(flags.since, '--since').toISOString() }),
        ...(flags.until === undefined ? {} : { until: parseDateFlag(flags.until, '--until').toISOString() }),
        ...(flags.action === undefined ? {} : { action: flags.action }),
        ...(flags.actor === undefined ? {} : { actor: flags.actor }),
        ...(flags.target === undefined ? {} : { target: flags.target }),
      };
      if (flags.jsonl) {
        const lines = await client.audit.exportJsonl(filters);
        if (lines !== '') io.out(lines);
        return;
      }
      const page = await client.audit.list({ ...filters, limit: flags.limit, cursor: flags.cursor });
      if (flags.json) return printJson(io, page);
      if (page.entries.length === 0) io.err('no audit rows');
      else
        io.out(
          formatTable(
            ['AT', 'ACTOR', 'VIA', 'ACTION', 'TARGET'],
            page.entries.map((e) => [
              e.at,
              e.actor.kind === 'system' ? 'system' : `${e.actor.id} (${e.actor.role})`,
              e.actor.via,
              e.action,
              `${e.target.kind}:${e.target.id}`,
            ]),
          ),
        );
      if (page.nextCursor) io.err(`more: mt audit --cursor ${page.nextCursor}`);
    });
  });
};
