import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { findKnowledgeBase } from '../internal/knowledge-base-lookup.js';
import { printJson } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

/** `mt kb-search KB QUERY`: the passages of a knowledge base that best answer a question, best first. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('kb-search')
    .description('Search a knowledge base: the passages that best answer a question, best first')
    .argument('<kb>', "the knowledge base's id or name")
    .argument('<query>', 'a question or a few words; "quoted" phrases rank higher')
    .option('--limit <n>', 'at most this many passages (1-50, default 5)', (v) => Number.parseInt(v, 10));
  addJsonOption(addConnectionOptions(command)).action(
    async (kbRef: string, query: string, flags: ApiFlags & { limit?: number }) => {
      await withClient(io, flags, async (client) => {
        const kb = await findKnowledgeBase(client, kbRef);
        const results = await client.knowledgeBases.search(kb.id, {
          query,
          ...(flags.limit !== undefined ? { limit: flags.limit } : {}),
        });
        if (flags.json) return printJson(io, results);
        if (results.length === 0) return io.err(`nothing in ${kb.name} matches`);
        io.out(
          results
            .map((r) => {
              const where = r.title ? `${r.document.name} > ${r.title}` : r.document.name;
              return `${where} (#${r.position}, score ${r.score.toFixed(3)})\n${r.text}`;
            })
            .join('\n\n'),
        );
      });
    },
  );
};
