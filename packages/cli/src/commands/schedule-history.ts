import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { formatTable } from '../internal/table.js';
import type { RegisterCommand } from './index.js';

interface HistoryFlags extends ApiFlags {
  limit?: string;
}

/** `mt schedule-history NAME`: a schedule's latest ticks and what became of each. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('schedule-history')
    .description(
      "Show a schedule's latest ticks, newest first: started (with its run), queued, skipped, missed or failed",
    )
    .argument('<name>', 'the schedule name')
    .option('--limit <n>', 'at most this many ticks (1-500, default 50)');
  addJsonOption(addConnectionOptions(command)).action(async (name: string, flags: HistoryFlags) => {
    await withClient(io, flags, async (client) => {
      const ticks = await client.schedules.ticks(name, flags.limit === undefined ? {} : { limit: Number(flags.limit) });
      if (flags.json) return printJson(io, ticks);
      if (ticks.length === 0) return io.err('no ticks yet');
      io.out(
        formatTable(
          ['TICK', 'VERSION', 'STATUS', 'RUN', 'DETAIL'],
          ticks.map((t) => [t.tick, t.version, t.status, t.runId ?? '-', t.detail ?? '']),
        ),
      );
    });
  });
};
