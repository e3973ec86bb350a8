import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

/** `mt schedule-resume NAME`: resumes a paused schedule (an admin key). */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('schedule-resume')
    .description('Resume a paused schedule: the ticks while it was paused are not made up for')
    .argument('<name>', 'the schedule name')
    .option('--reason <text>', 'why, kept in the audit log');
  addJsonOption(addConnectionOptions(command)).action(async (name: string, flags: ApiFlags & { reason?: string }) => {
    await withClient(io, flags, async (client) => {
      const s = await client.schedules.resume(name, flags.reason === undefined ? {} : { reason: flags.reason });
      if (flags.json) return printJson(io, s);
      io.out(`${s.name} ${s.paused ? 'paused' : 'resumed'}${s.nextTick === null ? '' : `: next tick ${s.nextTick}`}`);
    });
  });
};
