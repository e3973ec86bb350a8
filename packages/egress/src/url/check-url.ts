import { isIP } from 'node:net';
import { checkAddress } from '../address/check-address.js';
import { checkHostName } from '../names/host-name.js';
import { type EgressPolicy, effectivePort, isPlatformHost } from '../policy/egress-policy.js';

/** The verdict of the static rules on a parsed URL: allowed (with the IP when the host is a literal), or refused. */
export type UrlVerdict = { ok: true; ip?: string } | { ok: false; host: string; reason: string };

/**
 * Applies the rules that need no DNS to a parsed URL: scheme, user info, port 0, an IP-literal host
 * judged by its address, a name judged by the name rules, and the platform's own hosts.
 */
export function checkUrlStatically(url: URL, policy: EgressPolicy): UrlVerdict {
  const host = url.hostname;
  const refuse = (reason: string): UrlVerdict => ({ ok: false, host, reason });
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return refuse(`the scheme ${url.protocol} is not http or https`);
  }
  if (url.username !== '' || url.password !== '') return refuse('the URL carries user info (user:password@)');
  if (url.port === '0') return refuse('port 0 is not a port anything listens on');
  if (isPlatformHost(policy, host, effectivePort(url))) return refuse("the host is the platform's own");
  const literal = host.startsWith('[') ? host.slice(1, -1) : isIP(host) === 4 ? host : undefined;
  if (literal !== undefined) {
    const verdict = checkAddress(literal, policy);
    return verdict.ok ? { ok: true, ip: literal } : refuse(`${verdict.reason} (${verdict.range})`);
  }
  const verdict = checkHostName(host, policy.allow, policy.deny);
  return verdict.ok ? { ok: true } : refuse(verdict.reason);
}
