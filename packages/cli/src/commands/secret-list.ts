import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { formatTable } from '../internal/table.js';
import type { RegisterCommand } from './index.js';

/** `mt secret-list`: the namespace's secrets by id and name (never a value). */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('secret-list')
    .description('List the secrets by id and name (values are never shown)');
  addJsonOption(addConnectionOptions(command)).action(async (flags: ApiFlags) => {
    await withClient(io, flags, async (client) => {
      const secrets = await client.secrets.list();
      if (flags.json) return printJson(io, secrets);
      if (secrets.length === 0) return io.err('no secrets yet');
      io.out(
        formatTable(
          ['ID', 'NAME', 'CREATED', 'UPDATED'],
          secrets.map((s) => [s.id, s.name, s.createdAt, s.updatedAt]),
        ),
      );
    });
  });
};
