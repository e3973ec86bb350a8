import { type CallCredential, credentialOf, type SecretReader } from '@maitento/gateway';
import type { Tool } from '@maitento/lang';
import type { StoreCache } from '@maitento/store';

/** The namespace's secrets as the gateway's call builder reads them, through the server's cache. */
export function cacheSecrets(cache: StoreCache, namespace: string): SecretReader {
  return async (ref) => (await cache.readSecretValue(namespace, ref))?.value;
}

/**
 * The credential of a direct call of `tool` (REST or MCP): its `auth.secret` read by name in the namespace,
 * `{ missing }` when that secret does not exist (the gateway then refuses with the secret's name), or none.
 */
export function toolCredential(cache: StoreCache, namespace: string, tool: Tool): Promise<CallCredential | undefined> {
  return credentialOf({ tool, readSecret: cacheSecrets(cache, namespace) });
}
