import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printVersions } from '../internal/listing.js';
import type { RegisterCommand } from './index.js';

/** `mt connector-versions NAME`: every stored version of a connector, enabled or not. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('connector-versions')
    .description('List every version of a connector, with whether it is enabled')
    .argument('<name>', 'the connector name');
  addJsonOption(addConnectionOptions(command)).action(async (name: string, flags: ApiFlags) => {
    await withClient(io, flags, async (client) =>
      printVersions(io, await client.connectors.versions(name), flags.json),
    );
  });
};
