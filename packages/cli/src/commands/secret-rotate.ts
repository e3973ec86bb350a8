import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { findSecret } from '../internal/secret-lookup.js';
import { readSecretValue } from '../internal/secret-input.js';
import type { RegisterCommand } from './index.js';

/** `mt secret-rotate NAME_OR_ID`: replaces a secret's value (from `--value` or stdin, never echoed). */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('secret-rotate')
    .description("Replace a secret's value; tools send the new one from their next call")
    .argument('<name-or-id>', 'the secret name or id')
    .option('--value <value>', 'the new value (default: read from stdin, typed without echo on a terminal)');
  addJsonOption(addConnectionOptions(command)).action(
    async (nameOrId: string, flags: ApiFlags & { value?: string }) => {
      await withClient(io, flags, async (client) => {
        const secret = await findSecret(client, nameOrId);
        const value = await readSecretValue(flags.value, 'new secret value', '--value');
        const rotated = await client.secrets.rotate(secret.id, { value });
        if (flags.json) return printJson(io, rotated);
        io.err(`rotated secret ${rotated.name} (${rotated.id})`);
      });
    },
  );
};
