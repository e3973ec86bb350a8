import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { formatTable } from '../internal/table.js';
import type { RegisterCommand } from './index.js';

/** `mt schedule-list`: the deployed schedules with their last and next ticks. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('schedule-list')
    .description('List the deployed schedules with their cron expression, state and last and next ticks');
  addJsonOption(addConnectionOptions(command)).action(async (flags: ApiFlags) => {
    await withClient(io, flags, async (client) => {
      const list = await client.schedules.list();
      if (flags.json) return printJson(io, list);
      if (list.length === 0) return io.err('no schedules');
      io.out(
        formatTable(
          ['NAME', 'VERSION', 'INTERACTION', 'CRON', 'TIME ZONE', 'STATE', 'LAST TICK', 'NEXT TICK'],
          list.map((s) => [
            s.name,
            s.version,
            s.interaction,
            s.cron,
            s.timezone,
            !s.enabled ? 'disabled' : s.paused ? 'paused' : 'active',
            s.lastTick ?? '-',
            s.nextTick ?? '-',
          ]),
        ),
      );
    });
  });
};
