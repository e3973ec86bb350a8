import type { FileSystem, Maitento } from '@maitento/sdk';
import { cliErrors } from '../errors.js';

/** Finds a file system of the namespace by id, or else by name. */
export async function findFileSystem(client: Maitento, nameOrId: string): Promise<FileSystem> {
  const all = await client.fileSystems.list();
  const found = all.find((fs) => fs.id === nameOrId) ?? all.find((fs) => fs.name === nameOrId);
  if (found === undefined) {
    throw cliErrors.create('api:cli:file-system-not-found', { fileSystem: JSON.stringify(nameOrId) });
  }
  return found;
}
