import ipaddr from 'ipaddr.js';

/**
 * The IPv6 forms that carry an IPv4 address, and where it sits. A connection to one of these can reach
 * (through the host's dual stack, a NAT64 or SIIT translator, a 6to4 relay) the IPv4 address it carries,
 * so rules about "this very address" (the platform's own hosts, cloud metadata) compare that address.
 */
const CARRIERS: readonly { prefix: string; cidr: [ipaddr.IPv6, number]; offset: number }[] = [
  { prefix: '::ffff:0:0/96', offset: 12 }, // IPv4-mapped
  { prefix: '::ffff:0:0:0/96', offset: 12 }, // SIIT (IPv4-translated)
  { prefix: '64:ff9b::/96', offset: 12 }, // NAT64, well-known prefix
  { prefix: '64:ff9b:1::/48', offset: 12 }, // local-use NAT64, used as a /96
  { prefix: '2002::/16', offset: 2 }, // 6to4
  { prefix: '::/96', offset: 12 }, // IPv4-compatible (deprecated)
].map((c) => ({ ...c, cidr: ipaddr.parseCIDR(c.prefix) as [ipaddr.IPv6, number] }));

const UNSPECIFIED = ipaddr.parse('::') as ipaddr.IPv6;
const LOOPBACK = ipaddr.parse('::1') as ipaddr.IPv6;

/** An IPv6 address that carries an IPv4 address: the prefix of its form, and the IPv4 address. */
export interface CarriedIpv4 {
  /** The prefix of the form, such as `::ffff:0:0/96` (IPv4-mapped) or `64:ff9b::/96` (NAT64). */
  readonly prefix: string;
  readonly ipv4: ipaddr.IPv4;
}

/** The IPv4 address an IPv6 address carries (IPv4-mapped, SIIT, NAT64, 6to4, IPv4-compatible), if any. */
export function carriedIpv4(address: ipaddr.IPv6): CarriedIpv4 | undefined {
  // :: and ::1 lie in ::/96 but are the IPv6 unspecified and loopback addresses, not IPv4-compatible ones.
  if (address.match(UNSPECIFIED, 128) || address.match(LOOPBACK, 128)) return undefined;
  const carrier = CARRIERS.find(({ cidr }) => address.match(cidr));
  if (carrier === undefined) return undefined;
  const bytes = address.toByteArray();
  const ipv4 = ipaddr.fromByteArray(bytes.slice(carrier.offset, carrier.offset + 4)) as ipaddr.IPv4;
  return { prefix: carrier.prefix, ipv4 };
}

/**
 * The canonical form of an address, for rules about one address in every spelling: the IPv4 address an
 * IPv6 form carries when there is one, the address itself otherwise.
 */
export function canonicalIp(address: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return address.kind() === 'ipv6' ? (carriedIpv4(address as ipaddr.IPv6)?.ipv4 ?? address) : address;
}

/** {@link canonicalIp} as text: dotted-quad IPv4, or compressed lower-case IPv6 without brackets. */
export function canonicalIpText(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  return canonicalIp(address).toString();
}
