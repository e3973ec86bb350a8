import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { formatTable } from '../internal/table.js';
import type { RegisterCommand } from './index.js';

/** `mt key-list`: the namespace's API keys (ids and roles, never the keys). */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('key-list')
    .description('List the API keys of this namespace (never the keys themselves)');
  addJsonOption(addConnectionOptions(command)).action(async (flags: ApiFlags) => {
    await withClient(io, flags, async (client) => {
      const keys = await client.keys.list();
      if (flags.json) return printJson(io, keys);
      io.out(
        formatTable(
          ['ID', 'NAME', 'ROLE', 'SECRETS', 'CREATED'],
          keys.map((k) => [k.id, k.name, k.role, k.secrets.join(','), k.createdAt]),
        ),
      );
    });
  });
};
