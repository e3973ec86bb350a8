import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printSummaries } from '../internal/listing.js';
import type { RegisterCommand } from './index.js';

/** `mt auth-provider-list`: the deployed auth providers with their latest version. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('auth-provider-list')
    .description('List the deployed auth providers (OAuth 2) with their latest version');
  addJsonOption(addConnectionOptions(command)).action(async (flags: ApiFlags) => {
    await withClient(io, flags, async (client) =>
      printSummaries(io, await client.authProviders.list(), flags.json, 'auth providers'),
    );
  });
};
