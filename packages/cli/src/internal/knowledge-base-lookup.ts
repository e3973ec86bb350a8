import { extname } from 'node:path';
import type { KnowledgeBase, Maitento } from '@maitento/sdk';
import { cliErrors } from '../errors.js';

/** Finds a knowledge base of the namespace by id, or else by name. */
export async function findKnowledgeBase(client: Maitento, nameOrId: string): Promise<KnowledgeBase> {
  const all = await client.knowledgeBases.list();
  const found = all.find((kb) => kb.id === nameOrId) ?? all.find((kb) => kb.name === nameOrId);
  if (found === undefined) throw cliErrors.create('api:cli:kb-not-found', { kb: JSON.stringify(nameOrId) });
  return found;
}

const TYPES: Record<string, string> = {
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.pdf': 'application/pdf',
  '.txt': 'text/plain',
  '.text': 'text/plain',
};

/** The content type a file is sent with, from its extension; another extension is `api:cli:kb-file-type`. */
export function documentTypeOf(file: string): string {
  const type = TYPES[extname(file).toLowerCase()];
  if (type === undefined) throw cliErrors.create('api:cli:kb-file-type', { file });
  return type;
}
