import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printVersions } from '../internal/listing.js';
import type { RegisterCommand } from './index.js';

/** `mt agent-versions NAME`: every stored version of an agent. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('agent-versions')
    .description('List every version of an agent, newest first')
    .argument('<name>', 'the agent name');
  addJsonOption(addConnectionOptions(command)).action(async (name: string, flags: ApiFlags) => {
    await withClient(io, flags, async (client) => printVersions(io, await client.agents.versions(name), flags.json));
  });
};
