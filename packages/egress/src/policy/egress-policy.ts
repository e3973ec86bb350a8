import { canonicalIpText } from '../address/canonical.js';
import { parseCanonicalIp } from '../address/check-address.js';
import { egressErrors } from '../errors.js';
import { normalizeHostName } from '../names/host-name.js';
import { type AllowList, type DenyList, parseAllowList, parseDenyList } from './allow-list.js';

/** What the egress rules need to know: the operator's allow and deny lists and the platform's own hosts. */
export interface EgressPolicy {
  /** Private ranges and internal names the operator lets through (empty by default). */
  readonly allow: AllowList;
  /** Ranges and names the operator refuses, public or allowed (empty by default); wins over `allow`. */
  readonly deny: DenyList;
  /** The platform's own hosts, each `host` (every port) or `host:port`, normalised; always refused. */
  readonly platformHosts: readonly string[];
}

function invalidPlatformHost(entry: string, reason: string): Error {
  return egressErrors.create('api:egress:invalid-platform-host', { entry, reason });
}

/** Normalises a platform host entry (`host`, `host:port`, `[v6]:port`) by parsing it as a URL authority. */
function normalizePlatformHost(entry: string): string {
  let url: URL;
  try {
    url = new URL(`http://${entry}/`);
  } catch {
    throw invalidPlatformHost(entry, 'not a host name or IP, optionally with :port');
  }
  if (
    url.username !== '' ||
    url.password !== '' ||
    url.pathname !== '/' ||
    url.search !== '' ||
    /[/?#@\\]/.test(entry)
  ) {
    throw invalidPlatformHost(entry, 'only a host and an optional port are allowed');
  }
  const host = normalizeHostName(url.hostname);
  // new URL drops :80 as the default port, so the port is read from the entry itself.
  const port = /:(\d+)$/.exec(entry)?.[1];
  return port === undefined ? host : `${host}:${Number(port)}`;
}

/**
 * Creates an egress policy; throws `api:egress:invalid-allow-list`, `api:egress:invalid-deny-list` or
 * `api:egress:invalid-platform-host` on bad input.
 */
export function createEgressPolicy(
  options: { allow?: string | string[]; deny?: string | string[]; platformHosts?: string[] } = {},
): EgressPolicy {
  const platformHosts = (options.platformHosts ?? [])
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map(normalizePlatformHost);
  const policy: EgressPolicy = Object.freeze({
    allow: parseAllowList(options.allow),
    deny: parseDenyList(options.deny),
    platformHosts: Object.freeze([...new Set(platformHosts)]),
  });
  entriesOf(policy.platformHosts); // canonicalised now, not at every check
  return policy;
}

function publicUrlHost(publicUrl: string): string {
  let url: URL;
  try {
    url = new URL(publicUrl);
  } catch {
    throw invalidPlatformHost(publicUrl, 'MT_PUBLIC_URL is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalidPlatformHost(publicUrl, 'MT_PUBLIC_URL must be an http or https URL');
  }
  // Without an explicit port every port of the public host is the platform's; with one, only that port.
  const explicitPort = /^[a-z]+:\/\/[^/?#]*:(\d+)(?:[/?#]|$)/i.exec(publicUrl)?.[1];
  return explicitPort === undefined ? url.hostname : `${url.hostname}:${Number(explicitPort)}`;
}

/** Builds the policy from `MT_EGRESS_ALLOW`, `MT_EGRESS_DENY`, `MT_PLATFORM_HOSTS` and the host of `MT_PUBLIC_URL`. */
export function egressPolicyFromEnv(env: NodeJS.ProcessEnv = process.env): EgressPolicy {
  const platformHosts = (env.MT_PLATFORM_HOSTS ?? '').split(',');
  const publicUrl = env.MT_PUBLIC_URL?.trim();
  if (publicUrl) platformHosts.push(publicUrlHost(publicUrl));
  return createEgressPolicy({ allow: env.MT_EGRESS_ALLOW ?? '', deny: env.MT_EGRESS_DENY ?? '', platformHosts });
}

/** The effective port of a URL (`url.port`, or 80/443 by scheme). */
export function effectivePort(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/**
 * What a platform host is compared by: for an IP (brackets allowed) its canonical address, the IPv4
 * address an IPv6 form carries (IPv4-mapped, NAT64, ...) or else the compressed IPv6 text; for a name,
 * the name lower-cased without trailing dots.
 */
function platformKey(host: string): string {
  const ip = parseCanonicalIp(host);
  return ip === undefined ? normalizeHostName(host) : canonicalIpText(ip);
}

/** A platform host entry ready to compare: its {@link platformKey} and its port (`undefined`: every port). */
interface PlatformEntry {
  readonly key: string;
  readonly port: number | undefined;
}

/** The entries of each `platformHosts` list, canonicalised once (when the policy is made, or at its first check). */
const platformEntries = new WeakMap<readonly string[], readonly PlatformEntry[]>();

function entriesOf(platformHosts: readonly string[]): readonly PlatformEntry[] {
  let entries = platformEntries.get(platformHosts);
  if (entries === undefined) {
    entries = platformHosts.map((entry) => {
      const match = /^(.*?)(?::(\d+))?$/.exec(entry);
      const port = match?.[2];
      return { key: platformKey(match?.[1] ?? entry), port: port === undefined ? undefined : Number(port) };
    });
    platformEntries.set(platformHosts, entries);
  }
  return entries;
}

function matchesPlatform(policy: EgressPolicy, key: string, port: number | undefined): boolean {
  return entriesOf(policy.platformHosts).some(
    (entry) => entry.key === key && (entry.port === undefined || port === undefined || entry.port === port),
  );
}

/**
 * True when `host` (a name or IP, brackets allowed) on `port` is one of the platform's own hosts.
 * The addresses a name resolves to are compared one by one with {@link isPlatformAddress}.
 * IPs are compared by canonical address, so `[::ffff:127.0.0.1]`, `[::ffff:7f00:1]` and `[64:ff9b::7f00:1]`
 * are the platform host `127.0.0.1`, and `::1` is `[0:0::1]`.
 * Without a port (`undefined`) an entry of any port matches: not knowing the port must not let a call through.
 */
export function isPlatformHost(policy: EgressPolicy, host: string, port: number | undefined): boolean {
  return matchesPlatform(policy, platformKey(host), port);
}

/** True when the IP `address` (brackets allowed) on `port` is a platform host, compared by canonical address. */
export function isPlatformAddress(policy: EgressPolicy, address: string, port: number | undefined): boolean {
  const ip = parseCanonicalIp(address);
  return ip !== undefined && matchesPlatform(policy, canonicalIpText(ip), port);
}
