import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

/** `mt kb-create NAME`: creates a knowledge base; prints its id (what a run binds as partitionId). */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('kb-create')
    .description('Create a knowledge base; prints its id (the partitionId a run binds)')
    .argument('<name>', 'the knowledge base name')
    .option('--description <text>', 'what it holds')
    .option('--language <config>', 'the PostgreSQL text search language (default english)');
  addJsonOption(addConnectionOptions(command)).action(
    async (name: string, flags: ApiFlags & { description?: string; language?: string }) => {
      await withClient(io, flags, async (client) => {
        const kb = await client.knowledgeBases.create({
          name,
          ...(flags.description !== undefined ? { description: flags.description } : {}),
          ...(flags.language !== undefined ? { language: flags.language } : {}),
        });
        if (flags.json) return printJson(io, kb);
        io.out(kb.id);
        io.err(`created knowledge base ${kb.name} (${kb.language})`);
      });
    },
  );
};
