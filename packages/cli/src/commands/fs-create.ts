import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

/** `mt fs-create NAME`: creates a file system; prints its id (what a run binds as fileSystemId). */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('fs-create')
    .description('Create a file system; prints its id, what a run binds as fileSystemId')
    .argument('<name>', 'the file system name, unique in the namespace')
    .option('--description <text>', 'what it holds');
  addJsonOption(addConnectionOptions(command)).action(
    async (name: string, flags: ApiFlags & { description?: string }) => {
      await withClient(io, flags, async (client) => {
        const created = await client.fileSystems.create({ name, description: flags.description });
        if (flags.json) return printJson(io, created);
        io.out(created.id);
        io.err(`created file system ${created.name}`);
      });
    },
  );
};
