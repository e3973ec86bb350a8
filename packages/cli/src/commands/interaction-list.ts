import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printSummaries } from '../internal/listing.js';
import type { RegisterCommand } from './index.js';

/** `mt interaction-list`: the deployed interactions with their latest version. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('interaction-list')
    .description('List the deployed interactions with their latest version');
  addJsonOption(addConnectionOptions(command)).action(async (flags: ApiFlags) => {
    await withClient(io, flags, async (client) =>
      printSummaries(io, await client.interactions.list(), flags.json, 'interactions'),
    );
  });
};
