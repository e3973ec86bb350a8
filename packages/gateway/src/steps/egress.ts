import { authorizeUrl, BoundedMap, type EgressPolicy, type Resolver } from '@maitento/egress';
import { abortable } from '../internal/deadline.js';

/**
 * Authorizes the host of a URL against the egress policy, remembering a host that passed for a short while. A lookup
 * is raced with `signal` (the call's deadline): a DNS server may never answer.
 */
export type Authorizer = (url: URL, signal: AbortSignal, origin?: string) => Promise<void>;

/**
 * Step 6: `authorizeUrl` before dispatch (IP literals are judged here, as they never reach a lookup). A host that
 * passed is remembered for `ttlMs`; this only saves repeated lookups, because the egress agent judges every
 * address again when it opens a connection, so a name that changes to a private address is still refused.
 */
export function createAuthorizer(policy: EgressPolicy, resolver: Resolver | undefined, ttlMs: number): Authorizer {
  const passed = new BoundedMap<string, number>(10_000);
  return async (url, signal, origin = url.origin) => {
    const until = passed.get(origin);
    const now = Date.now();
    if (until !== undefined && until > now) return;
    await abortable(authorizeUrl(url, policy, resolver), signal);
    if (ttlMs > 0) {
      passed.set(origin, now + ttlMs);
    }
  };
}
