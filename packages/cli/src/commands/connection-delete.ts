import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

/** `mt connection-delete ID`: deletes a connection and its tokens. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('connection-delete')
    .description('Delete a connection and its tokens; the end user needs a new connect link')
    .argument('<id>', 'the connection id');
  addJsonOption(addConnectionOptions(command)).action(async (id: string, flags: ApiFlags) => {
    await withClient(io, flags, async (client) => {
      const gone = await client.connections.delete(id);
      if (flags.json) return printJson(io, { ...gone, deleted: true });
      io.err(`deleted the connection of ${gone.endUser} at ${gone.provider} (${gone.id})`);
    });
  });
};
