import type { Maitento, SecretInfo } from '@maitento/sdk';
import { cliErrors } from '../errors.js';

/** Finds a secret of the namespace by id, or else by name. */
export async function findSecret(client: Maitento, nameOrId: string): Promise<SecretInfo> {
  const secrets = await client.secrets.list();
  const found = secrets.find((s) => s.id === nameOrId) ?? secrets.find((s) => s.name === nameOrId);
  if (found === undefined) throw cliErrors.create('api:cli:secret-not-found', { secret: JSON.stringify(nameOrId) });
  return found;
}
