import { isIP } from 'node:net';
import { checkAddress } from '../address/check-address.js';
import { addressBlockedError, egressErrors } from '../errors.js';
import { type EgressPolicy, effectivePort, isPlatformAddress, isPlatformHost } from '../policy/egress-policy.js';
import { checkUrlStatically } from '../url/check-url.js';
import { type ResolvedAddress, type Resolver, systemResolver } from './resolver.js';

/**
 * Resolves `hostname` once and checks every answer, and the platform's own hosts on `port` (on any port
 * when `port` is not known); returns the checked list or throws `api:connectors:address-blocked` (any
 * answer not allowed) or `api:egress:name-not-resolved`.
 */
export async function resolveAndCheck(
  hostname: string,
  policy: EgressPolicy,
  resolver: Resolver,
  port?: number,
): Promise<ResolvedAddress[]> {
  if (isPlatformHost(policy, hostname, port)) throw addressBlockedError(hostname, "the host is the platform's own");
  let answers: ResolvedAddress[];
  try {
    answers = await resolver(hostname);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw egressErrors.create(
      'api:egress:name-not-resolved',
      { host: hostname, reason: typeof code === 'string' ? code : 'the lookup failed' },
      { cause: error },
    );
  }
  if (!Array.isArray(answers) || answers.length === 0) {
    throw egressErrors.create('api:egress:name-not-resolved', { host: hostname, reason: 'the name has no addresses' });
  }
  // Every answer is judged, not only the first: a client may connect to any of them.
  for (const answer of answers) {
    const verdict = checkAddress(answer.address, policy);
    if (!verdict.ok) {
      throw addressBlockedError(
        hostname,
        `it resolves to an address refused as ${verdict.reason} (${verdict.range})`,
        answer.address,
      );
    }
  }
  // The platform's own hosts, compared with every answer as a canonical address (so ::ffff:127.0.0.1
  // is the platform host 127.0.0.1); the refusal names the answer that matched.
  const platform = answers.find((answer) => isPlatformAddress(policy, answer.address, port));
  if (platform !== undefined) {
    throw addressBlockedError(hostname, "it resolves to the platform's own host", platform.address);
  }
  // The family is taken from the address itself, so a resolver that mislabels one can't confuse net.connect.
  return answers.map(({ address }) => ({ address, family: isIP(address) === 6 ? 6 : 4 }));
}

/**
 * The call-time check of a URL: the static rules, then one resolution whose every answer must be
 * allowed. Returns the checked addresses (the literal itself for an IP host); throws an MtError.
 */
export async function authorizeUrl(
  url: URL,
  policy: EgressPolicy,
  resolver: Resolver = systemResolver,
): Promise<ResolvedAddress[]> {
  const verdict = checkUrlStatically(url, policy);
  if (!verdict.ok) throw addressBlockedError(verdict.host, verdict.reason);
  if (verdict.ip !== undefined) return [{ address: verdict.ip, family: verdict.ip.includes(':') ? 6 : 4 }];
  return resolveAndCheck(url.hostname, policy, resolver, effectivePort(url));
}
