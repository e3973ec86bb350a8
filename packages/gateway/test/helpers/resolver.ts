import type { Resolver } from '@maitento/egress';

/** A resolver the test controls: known names map to the given addresses, others fail like NXDOMAIN; calls are counted. */
export function fakeResolver(map: Record<string, string | string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolver = async (hostname: string) => {
    calls.push(hostname);
    const answer = map[hostname];
    if (answer === undefined) {
      const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
      error.code = 'ENOTFOUND';
      throw error;
    }
    return (Array.isArray(answer) ? answer : [answer]).map((address) => ({
      address,
      family: (address.includes(':') ? 6 : 4) as 4 | 6,
    }));
  };
  return Object.assign(resolver, { calls });
}
