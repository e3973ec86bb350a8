import type { CallCredential } from '@maitento/gateway';
import type { Tool } from '@maitento/lang';
import type { StoreCache } from '@maitento/store';

/**
 * The credential of a direct call of `tool` (REST or MCP): its `auth.secret` read by name in the namespace,
 * `{ missing }` when that secret does not exist (the gateway then refuses with the secret's name), or none.
 */
export async function toolCredential(
  cache: StoreCache,
  namespace: string,
  tool: Tool,
): Promise<CallCredential | undefined> {
  const auth = tool.auth;
  if (!auth) return undefined;
  const secret = await cache.readSecretValue(namespace, { name: auth.secret });
  return secret ? { header: auth.header, value: secret.value } : { missing: { secret: auth.secret } };
}
