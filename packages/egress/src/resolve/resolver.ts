import { lookup } from 'node:dns/promises';
import { BoundedMap } from '../internal/bounded-map.js';

/** One answer of a name lookup. */
export type ResolvedAddress = { address: string; family: 4 | 6 };

/** Resolves a host name to every address it has; tests pass their own to control "public" hosts. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** The operating system's resolver: `dns.lookup` with `{ all: true, verbatim: true }`. */
export const systemResolver: Resolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

/** A resolver that answers `hostname` with exactly `addresses` and refuses every other name. */
export function pinnedResolver(hostname: string, addresses: readonly ResolvedAddress[]): Resolver {
  const pinned = hostname.toLowerCase().replace(/\.+$/, '');
  return async (name) => {
    if (name.toLowerCase().replace(/\.+$/, '') !== pinned) {
      throw Object.assign(new Error(`pinned resolver has no answer for ${name}`), { code: 'ENOTFOUND' });
    }
    return addresses.map((a) => ({ ...a }));
  };
}

/**
 * Wraps a resolver so that answers are reused for `ttlMs` (and concurrent lookups of one name share
 * one query). Passing the same caching resolver to `authorizeUrl` and `createEgressAgent` makes the
 * connection use the very answers the check saw, without a second DNS query. Failures are not cached.
 */
export function createCachingResolver(
  resolver: Resolver,
  options: { ttlMs?: number; maxEntries?: number } = {},
): Resolver {
  const ttlMs = options.ttlMs ?? 10_000;
  const maxEntries = options.maxEntries ?? 1_000;
  const cache = new BoundedMap<string, { at: number; answer: Promise<ResolvedAddress[]> }>(maxEntries);
  return (hostname) => {
    const key = hostname.toLowerCase();
    const now = Date.now();
    const hit = cache.get(key);
    if (hit && now - hit.at < ttlMs) return hit.answer.then((list) => list.map((a) => ({ ...a })));
    const answer = resolver(hostname);
    cache.set(key, { at: now, answer });
    answer.catch(() => {
      if (cache.get(key)?.answer === answer) cache.delete(key);
    });
    return answer.then((list) => list.map((a) => ({ ...a })));
  };
}
