import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { KnowledgeDocument } from '@maitento/sdk';
import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { documentTypeOf, findKnowledgeBase } from '../internal/knowledge-base-lookup.js';
import { ExitCode } from '../internal/exit-codes.js';
import { CommandExit, printJson } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

const BAR_WIDTH = 24;

/** `[#########...............]  3/8` */
function bar(done: number, total: number): string {
  const filled = Math.round((done / total) * BAR_WIDTH);
  return `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${String(done).padStart(String(total).length)}/${total}`;
}

/**
 * `mt kb-add KB FILE...`: adds files to a knowledge base, one request each, with a progress bar on stderr; a
 * file of a name already there replaces it. Every file is tried; the exit code is 1 when any was refused.
 */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('kb-add')
    .description('Add files (.md, .txt, .html, .pdf) to a knowledge base; a document of the same name is replaced')
    .argument('<kb>', "the knowledge base's id or name")
    .argument('<files...>', 'the files; each is stored under its file name');
  addJsonOption(addConnectionOptions(command)).action(async (kbRef: string, files: string[], flags: ApiFlags) => {
    await withClient(io, flags, async (client) => {
      const kb = await findKnowledgeBase(client, kbRef);
      const added: KnowledgeDocument[] = [];
      const failed: { file: string; error: string; code?: string }[] = [];
      for (const [i, file] of files.entries()) {
        try {
          const content = new Uint8Array(await readFile(file));
          const document = await client.knowledgeBases.addDocument(kb.id, {
            name: basename(file),
            contentType: documentTypeOf(file),
            content,
          });
          added.push(document);
          io.err(`${bar(i + 1, files.length)} ${document.name}: ${document.chunkCount} passages`);
        } catch (error) {
          const code = (error as { code?: string }).code;
          const message = error instanceof Error ? error.message : String(error);
          failed.push({ file, error: message, ...(code ? { code } : {}) });
          io.err(`${bar(i + 1, files.length)} ${file}: error${code ? ` [${code}]` : ''}: ${message}`);
        }
      }
      if (flags.json) printJson(io, { knowledgeBase: kb.id, added, failed });
      else io.err(`added ${added.length} of ${files.length} files to ${kb.name}`);
      if (failed.length > 0) throw new CommandExit(ExitCode.UserError);
    });
  });
};
