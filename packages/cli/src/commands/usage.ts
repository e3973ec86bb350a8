import { Option } from 'commander';
import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { usd } from '../internal/run-output.js';
import { formatTable } from '../internal/table.js';
import type { RegisterCommand } from './index.js';
import { parseDateFlag } from './runs-prune.js';

interface UsageFlags extends ApiFlags {
  since?: string;
  until?: string;
  by?: 'namespace' | 'interaction' | 'key' | 'tool';
}

/**
 * `mt usage [--since DATE] [--until DATE] [--by namespace|interaction|key|tool]`: what the runs of the key's
 * namespace spent (an admin key): runs, tool calls, tokens and cost (by tool: the runs that called it and its calls).
 */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('usage')
    .description('Show what the runs of the namespace spent (admin key): runs, tool calls, tokens and cost')
    .option('--since <date>', 'only runs created at or after this date (YYYY-MM-DD, midnight UTC) or ISO 8601 time')
    .option('--until <date>', 'only runs created before this date (YYYY-MM-DD, midnight UTC) or ISO 8601 time')
    .addOption(
      new Option(
        '--by <grouping>',
        'one line for the namespace (default), or per interaction, key or tool (tokens and cost are the model’s: 0 by tool)',
      ).choices(['namespace', 'interaction', 'key', 'tool']),
    );
  addJsonOption(addConnectionOptions(command)).action(async (flags: UsageFlags) => {
    await withClient(io, flags, async (client) => {
      const report = await client.usage.get({
        ...(flags.since === undefined ? {} : { since: parseDateFlag(flags.since, '--since').toISOString() }),
        ...(flags.until === undefined ? {} : { until: parseDateFlag(flags.until, '--until').toISOString() }),
        ...(flags.by === undefined ? {} : { by: flags.by }),
      });
      if (flags.json) return printJson(io, report);
      if (report.groups.length === 0) return io.err('no runs in this period');
      io.out(
        formatTable(
          [report.by.toUpperCase(), 'RUNS', 'TOOL CALLS', 'INPUT TOKENS', 'OUTPUT TOKENS', 'COST'],
          report.groups.map((g) => [g.key ?? '-', g.runs, g.toolCalls, g.inputTokens, g.outputTokens, usd(g.costUsd)]),
        ),
      );
    });
  });
};
