import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { readSecretValue } from '../internal/secret-input.js';
import type { RegisterCommand } from './index.js';

/** `mt secret-create NAME`: stores a secret; the value comes from `--value` or stdin and is never echoed. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('secret-create')
    .description('Store a secret (a credential tools send); prints its id')
    .argument('<name>', 'the secret name, as tools name it in @ref("...")')
    .option('--value <value>', 'the value (default: read from stdin, typed without echo on a terminal)');
  addJsonOption(addConnectionOptions(command)).action(async (name: string, flags: ApiFlags & { value?: string }) => {
    await withClient(io, flags, async (client) => {
      const value = await readSecretValue(flags.value, 'secret value', '--value');
      const secret = await client.secrets.create({ name, value });
      if (flags.json) return printJson(io, secret);
      io.out(secret.id);
      io.err(`created secret ${secret.name}`);
    });
  });
};
