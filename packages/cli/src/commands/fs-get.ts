import { writeFile } from 'node:fs/promises';
import { type ApiFlags, addConnectionOptions, withClient } from '../internal/api.js';
import { findFileSystem } from '../internal/file-system-lookup.js';
import type { RegisterCommand } from './index.js';

/** `mt fs-get FS PATH`: the file's bytes on stdout, or into `-o FILE`. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('fs-get')
    .description('Print a file of a file system (its bytes, as stored), or write it to -o FILE')
    .argument('<fs>', "the file system's id or name")
    .argument('<path>', "the file's path, for example notes/today.md")
    .option('-o, --output <file>', 'write the file here instead of stdout');
  addConnectionOptions(command).action(
    async (nameOrId: string, path: string, flags: ApiFlags & { output?: string }) => {
      await withClient(io, flags, async (client) => {
        const fs = await findFileSystem(client, nameOrId);
        const file = await client.fileSystems.read(fs.id, path);
        if (flags.output !== undefined) {
          await writeFile(flags.output, file.content);
          io.err(`wrote ${file.content.length} bytes to ${flags.output} (${file.contentType}, ETag ${file.etag})`);
          return;
        }
        await new Promise<void>((resolve, reject) =>
          process.stdout.write(file.content, (error) => (error ? reject(error) : resolve())),
        );
      });
    },
  );
};
