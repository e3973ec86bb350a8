import type { SecretReader } from '@maitento/gateway';
import type { StoreCache } from '@maitento/store';

/** The namespace's secrets as the gateway's call builder reads them, through the server's cache. */
export function cacheSecrets(cache: StoreCache, namespace: string): SecretReader {
  return async (ref) => (await cache.readSecretValue(namespace, ref))?.value;
}
