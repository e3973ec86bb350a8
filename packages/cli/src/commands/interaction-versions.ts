import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printVersions } from '../internal/listing.js';
import type { RegisterCommand } from './index.js';

/** `mt interaction-versions NAME`: every stored version of an interaction. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('interaction-versions')
    .description('List every version of an interaction, newest first')
    .argument('<name>', 'the interaction name');
  addJsonOption(addConnectionOptions(command)).action(async (name: string, flags: ApiFlags) => {
    await withClient(io, flags, async (client) =>
      printVersions(io, await client.interactions.versions(name), flags.json),
    );
  });
};
