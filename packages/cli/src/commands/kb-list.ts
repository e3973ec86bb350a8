import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { formatTable } from '../internal/table.js';
import type { RegisterCommand } from './index.js';

/** `mt kb-list`: the namespace's knowledge bases with their documents and passages. */
export const register: RegisterCommand = (program, io) => {
  const command = program.command('kb-list').description('List the knowledge bases');
  addJsonOption(addConnectionOptions(command)).action(async (flags: ApiFlags) => {
    await withClient(io, flags, async (client) => {
      const all = await client.knowledgeBases.list();
      if (flags.json) return printJson(io, all);
      if (all.length === 0) return io.err('no knowledge bases yet: `mt kb-create NAME` makes one');
      io.out(
        formatTable(
          ['ID', 'NAME', 'LANGUAGE', 'DOCUMENTS', 'PASSAGES', 'CREATED'],
          all.map((kb) => [kb.id, kb.name, kb.language, String(kb.documentCount), String(kb.chunkCount), kb.createdAt]),
        ),
      );
    });
  });
};
