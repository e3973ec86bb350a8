import { readFile } from 'node:fs/promises';
import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { findFileSystem } from '../internal/file-system-lookup.js';
import { printJson } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** `mt fs-put FS PATH [FILE]`: creates or replaces a file with FILE's bytes (or stdin's). */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('fs-put')
    .description("Create or replace a file of a file system with FILE's bytes (or stdin's); prints its ETag")
    .argument('<fs>', "the file system's id or name")
    .argument('<path>', "the file's path in the file system, for example notes/today.md")
    .argument('[file]', 'the local file to send (default: stdin)')
    .option('--content-type <type>', 'stored with the file and served back (default application/octet-stream)')
    .option('--if-match <etag>', 'replace the file only while it has this ETag (from fs-put or fs-ls --json)');
  addJsonOption(addConnectionOptions(command)).action(
    async (
      nameOrId: string,
      path: string,
      local: string | undefined,
      flags: ApiFlags & { contentType?: string; ifMatch?: string },
    ) => {
      await withClient(io, flags, async (client) => {
        const content = local === undefined ? await readStdin() : await readFile(local);
        const fs = await findFileSystem(client, nameOrId);
        const file = await client.fileSystems.write(fs.id, path, content, {
          contentType: flags.contentType,
          ifMatch: flags.ifMatch,
        });
        if (flags.json) return printJson(io, file);
        io.out(file.etag);
        io.err(`wrote ${file.path} (${file.size} bytes) to ${fs.name}`);
      });
    },
  );
};
