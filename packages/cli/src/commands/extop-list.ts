import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printSummaries } from '../internal/listing.js';
import type { RegisterCommand } from './index.js';

/** `mt extop-list`: List the deployed tools (extops) with their latest version. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('extop-list')
    .description('List the deployed tools (extops) with their latest version');
  addJsonOption(addConnectionOptions(command)).action(async (flags: ApiFlags) => {
    await withClient(io, flags, async (client) => printSummaries(io, await client.extops.list(), flags.json, 'tools'));
  });
};
