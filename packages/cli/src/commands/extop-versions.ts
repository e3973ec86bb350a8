import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printVersions } from '../internal/listing.js';
import type { RegisterCommand } from './index.js';

/** `mt extop-versions NAME`: every stored version of a tool (extop), enabled or not. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('extop-versions')
    .description('List every version of a tool (extop), with whether it is enabled')
    .argument('<name>', 'the tool name');
  addJsonOption(addConnectionOptions(command)).action(async (name: string, flags: ApiFlags) => {
    await withClient(io, flags, async (client) => printVersions(io, await client.extops.versions(name), flags.json));
  });
};
