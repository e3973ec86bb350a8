import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { findFileSystem } from '../internal/file-system-lookup.js';
import { printJson } from '../internal/output.js';
import { formatTable } from '../internal/table.js';
import type { RegisterCommand } from './index.js';

/** `mt fs-ls [FS]`: the namespace's file systems, or the files of one (every page), by path prefix. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('fs-ls')
    .description('List the file systems, or with FS the files of one (by path, every page)')
    .argument('[fs]', "a file system's id or name")
    .option('--prefix <prefix>', 'only files whose path starts with it, for example notes/');
  addJsonOption(addConnectionOptions(command)).action(
    async (nameOrId: string | undefined, flags: ApiFlags & { prefix?: string }) => {
      await withClient(io, flags, async (client) => {
        if (nameOrId === undefined) {
          const all = await client.fileSystems.list();
          if (flags.json) return printJson(io, all);
          if (all.length === 0) return io.err('no file systems yet; create one with `mt fs-create NAME`');
          io.out(
            formatTable(
              ['ID', 'NAME', 'FILES', 'BYTES', 'CREATED'],
              all.map((fs) => [fs.id, fs.name, String(fs.files), String(fs.bytes), fs.createdAt]),
            ),
          );
          return;
        }
        const fs = await findFileSystem(client, nameOrId);
        const files = [];
        for await (const file of client.fileSystems.iterFiles(fs.id, { prefix: flags.prefix, limit: 1000 })) {
          files.push(file);
        }
        if (flags.json) return printJson(io, files);
        if (files.length === 0) return io.err(`no files in ${fs.name}${flags.prefix ? ` under ${flags.prefix}` : ''}`);
        io.out(
          formatTable(
            ['PATH', 'SIZE', 'TYPE', 'UPDATED'],
            files.map((f) => [f.path, String(f.size), f.contentType, f.updatedAt]),
          ),
        );
      });
    },
  );
};
