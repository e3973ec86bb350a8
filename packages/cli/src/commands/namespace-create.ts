import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

/** `mt namespace-create NAME`: creates a namespace (operator keys only) and prints its first admin key. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('namespace-create')
    .description('Create a namespace (needs an admin key of `default`); prints its first admin key, shown only once')
    .argument('<name>', 'the namespace name');
  addJsonOption(addConnectionOptions(command)).action(async (name: string, flags: ApiFlags) => {
    await withClient(io, flags, async (client) => {
      const created = await client.namespaces.create({ name });
      if (flags.json) return printJson(io, created);
      io.out(created.key.key);
      io.err(
        `created namespace ${created.name}; its admin key (id ${created.key.id}) went to standard output, only this once: keep it`,
      );
    });
  });
};
