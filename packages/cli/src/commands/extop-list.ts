import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { formatTable } from '../internal/table.js';
import type { RegisterCommand } from './index.js';

/** `mt extop-list`: the deployed tools (extops) with their latest version and whether each can be called. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('extop-list')
    .description('List the deployed tools (extops) with their latest version and whether each can be called');
  addJsonOption(addConnectionOptions(command)).action(async (flags: ApiFlags) => {
    await withClient(io, flags, async (client) => {
      const list = await client.extops.list();
      if (flags.json) return printJson(io, list);
      if (list.length === 0) return io.err('no tools deployed yet');
      io.out(
        formatTable(
          ['NAME', 'LATEST', 'ENABLED', 'CALLABLE'],
          list.map((item) => [
            item.name,
            item.latestVersion,
            item.enabled,
            item.callable ? 'yes' : `no: ${item.reason ?? 'disabled'}`,
          ]),
        ),
      );
    });
  });
};
