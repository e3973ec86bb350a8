import { RUN_STATUSES } from '@maitento/sdk/client';
import { InvalidArgumentError, Option } from 'commander';
import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { usd } from '../internal/run-output.js';
import { formatTable } from '../internal/table.js';
import type { RegisterCommand } from './index.js';

function parseLimit(value: string): number {
  if (!/^[1-9][0-9]*$/.test(value) || Number(value) > 200)
    throw new InvalidArgumentError('a whole number from 1 to 200');
  return Number(value);
}

interface ListFlags extends ApiFlags {
  interaction?: string;
  agent?: string;
  tool?: string;
  status?: (typeof RUN_STATUSES)[number];
  limit?: number;
  cursor?: string;
}

/** `mt run-list [--interaction NAME] [--agent NAME] [--tool NAME] [--status S] [--limit N] [--cursor C]`: runs, newest first. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('run-list')
    .description('List runs, newest first, one page at a time')
    .option('--interaction <name>', 'only runs of this interaction')
    .option('--agent <name>', 'only runs that pinned a version of this agent')
    .option('--tool <name>', 'only runs that called this tool')
    .addOption(new Option('--status <status>', 'only runs in this status').choices(RUN_STATUSES))
    .option('--limit <n>', 'at most this many (default 50, at most 200)', parseLimit)
    .option('--cursor <cursor>', 'the next page, as the previous page printed');
  addJsonOption(addConnectionOptions(command)).action(async (flags: ListFlags) => {
    await withClient(io, flags, async (client) => {
      const page = await client.interactionRuns.list({
        interaction: flags.interaction,
        agent: flags.agent,
        tool: flags.tool,
        status: flags.status,
        limit: flags.limit,
        cursor: flags.cursor,
      });
      if (flags.json) return printJson(io, page);
      if (page.runs.length === 0) io.err('no runs');
      else
        io.out(
          formatTable(
            // PARENT: the run whose call handed this one its task (agents as tools), `-` for a top run.
            // TOKENS: input + output tokens its model turns spent; COST: their cost by the price table.
            ['ID', 'INTERACTION', 'STATUS', 'PARENT', 'TOKENS', 'COST', 'CREATED', 'UPDATED'],
            page.runs.map((r) => [
              r.id,
              `${r.interaction.name}@${r.interaction.version}`,
              r.status,
              r.parentRunId ?? '-',
              r.usage === undefined ? '-' : r.usage.inputTokens + r.usage.outputTokens,
              r.usage === undefined ? '-' : usd(r.usage.costUsd),
              r.createdAt,
              r.updatedAt,
            ]),
          ),
        );
      if (page.nextCursor) io.err(`more: mt run-list --cursor ${page.nextCursor}`);
    });
  });
};
