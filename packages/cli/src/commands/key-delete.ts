import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

/** `mt key-delete ID`: revokes an API key. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('key-delete')
    .description('Delete (revoke) an API key; calls with it fail at once')
    .argument('<id>', 'the key id (see `mt key-list`)');
  addJsonOption(addConnectionOptions(command)).action(async (id: string, flags: ApiFlags) => {
    await withClient(io, flags, async (client) => {
      await client.keys.delete(id);
      if (flags.json) return printJson(io, { id, deleted: true });
      io.err(`deleted key ${id}`);
    });
  });
};
