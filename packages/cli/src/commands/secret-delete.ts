import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { findSecret } from '../internal/secret-lookup.js';
import type { RegisterCommand } from './index.js';

/** `mt secret-delete NAME_OR_ID`: deletes a secret. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('secret-delete')
    .description('Delete a secret; tools that send it fail until it exists again')
    .argument('<name-or-id>', 'the secret name or id');
  addJsonOption(addConnectionOptions(command)).action(async (nameOrId: string, flags: ApiFlags) => {
    await withClient(io, flags, async (client) => {
      const secret = await findSecret(client, nameOrId);
      await client.secrets.delete(secret.id);
      if (flags.json) return printJson(io, { id: secret.id, name: secret.name, deleted: true });
      io.err(`deleted secret ${secret.name} (${secret.id})`);
    });
  });
};
