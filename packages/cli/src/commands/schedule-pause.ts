import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

/** `mt schedule-pause NAME`: pauses a schedule (an admin key). */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('schedule-pause')
    .description('Pause a schedule in every process: its ticks start no run until it is resumed')
    .argument('<name>', 'the schedule name')
    .option('--reason <text>', 'why, kept in the audit log');
  addJsonOption(addConnectionOptions(command)).action(async (name: string, flags: ApiFlags & { reason?: string }) => {
    await withClient(io, flags, async (client) => {
      const s = await client.schedules.pause(name, flags.reason === undefined ? {} : { reason: flags.reason });
      if (flags.json) return printJson(io, s);
      io.out(`${s.name} ${s.paused ? 'paused' : 'resumed'}${s.nextTick === null ? '' : `: next tick ${s.nextTick}`}`);
    });
  });
};
