import ipaddr from 'ipaddr.js';

/** One refused address range: its CIDR, what it is, and the RFC or registry that defines it. */
export interface BlockedRange {
  /** The range in CIDR notation, as written in `docs/security.md`. */
  readonly cidr: string;
  /** What the range is for, in a few words. */
  readonly name: string;
  /** Where the range is defined. */
  readonly source: string;
}

/**
 * Every IPv4 range Maitento refuses: the IANA IPv4 Special-Purpose Address Registry entries that
 * are not globally reachable, plus multicast and the reserved 240/4 block. The few registry entries
 * inside 192.0.0.0/24 that are globally reachable (192.0.0.9, 192.0.0.10) are refused with the rest
 * of that block, because no public API lives there.
 */
export const blockedIpv4Ranges: readonly BlockedRange[] = [
  { cidr: '0.0.0.0/8', name: '"this network" (0.0.0.0 reaches the local host)', source: 'RFC 791, RFC 1122' },
  { cidr: '10.0.0.0/8', name: 'private-use network', source: 'RFC 1918' },
  { cidr: '100.64.0.0/10', name: 'shared address space (carrier-grade NAT, some cloud metadata)', source: 'RFC 6598' },
  { cidr: '127.0.0.0/8', name: 'loopback', source: 'RFC 1122' },
  { cidr: '169.254.0.0/16', name: 'link-local (cloud metadata at 169.254.169.254)', source: 'RFC 3927' },
  { cidr: '172.16.0.0/12', name: 'private-use network', source: 'RFC 1918' },
  { cidr: '192.0.0.0/24', name: 'IETF protocol assignments', source: 'RFC 6890' },
  { cidr: '192.0.2.0/24', name: 'documentation (TEST-NET-1)', source: 'RFC 5737' },
  { cidr: '192.88.99.0/24', name: '6to4 relay anycast (deprecated)', source: 'RFC 7526' },
  { cidr: '192.168.0.0/16', name: 'private-use network', source: 'RFC 1918' },
  { cidr: '198.18.0.0/15', name: 'benchmarking', source: 'RFC 2544' },
  { cidr: '198.51.100.0/24', name: 'documentation (TEST-NET-2)', source: 'RFC 5737' },
  { cidr: '203.0.113.0/24', name: 'documentation (TEST-NET-3)', source: 'RFC 5737' },
  { cidr: '224.0.0.0/4', name: 'multicast', source: 'RFC 5771' },
  { cidr: '255.255.255.255/32', name: 'limited broadcast', source: 'RFC 919' },
  { cidr: '240.0.0.0/4', name: 'reserved for future use', source: 'RFC 1112' },
];

/**
 * Every IPv6 range Maitento refuses outright. On top of these, any address outside 2000::/3 (the
 * only block IANA allocates as global unicast) is refused; IPv4-mapped (::ffff:0:0/96) and NAT64
 * (64:ff9b::/96) addresses are judged by the IPv4 address they carry.
 */
export const blockedIpv6Ranges: readonly BlockedRange[] = [
  { cidr: '::/128', name: 'unspecified address', source: 'RFC 4291' },
  { cidr: '::1/128', name: 'loopback', source: 'RFC 4291' },
  { cidr: '::/96', name: 'IPv4-compatible (deprecated)', source: 'RFC 4291' },
  { cidr: '::ffff:0:0:0/96', name: 'IPv4-translated (SIIT)', source: 'RFC 2765' },
  { cidr: '64:ff9b:1::/48', name: 'local-use IPv4/IPv6 translation', source: 'RFC 8215' },
  { cidr: '100::/64', name: 'discard-only', source: 'RFC 6666' },
  { cidr: '100:0:0:1::/64', name: 'dummy IPv6 prefix', source: 'RFC 9780' },
  { cidr: '2001:db8::/32', name: 'documentation', source: 'RFC 3849' },
  { cidr: '2001::/32', name: 'Teredo (carries an IPv4 address)', source: 'RFC 4380' },
  { cidr: '2001::/23', name: 'IETF protocol assignments (ORCHID, benchmarking, AMT, ...)', source: 'RFC 2928' },
  { cidr: '2002::/16', name: '6to4 (carries an IPv4 address)', source: 'RFC 3056' },
  { cidr: '3fff::/20', name: 'documentation', source: 'RFC 9637' },
  { cidr: '5f00::/16', name: 'segment routing (SRv6) SIDs', source: 'RFC 9602' },
  { cidr: 'fc00::/7', name: 'unique local (private) addresses', source: 'RFC 4193' },
  { cidr: 'fe80::/10', name: 'link-local', source: 'RFC 4291' },
  { cidr: 'fec0::/10', name: 'site-local (deprecated)', source: 'RFC 3879' },
  { cidr: 'ff00::/8', name: 'multicast', source: 'RFC 4291' },
];

/**
 * Cloud metadata and host services that live at public addresses, refused like a special-purpose range.
 * Every other metadata address the major clouds document lies in a range above (see
 * {@link metadataAddresses}, the list the allow-list rule for metadata uses).
 */
export const blockedMetadataRanges: readonly BlockedRange[] = [
  {
    cidr: '168.63.129.16/32',
    name: 'Azure WireServer and host services (VM agent, DNS, health probes)',
    source: 'Microsoft Learn, "What is IP address 168.63.129.16?"',
  },
];

/** A cloud metadata or credential service at one address, as its provider documents it. */
export interface MetadataAddress {
  /** The address, canonical (dotted-quad IPv4, compressed IPv6). */
  readonly address: string;
  /** Whose service it is. */
  readonly name: string;
}

/**
 * Every cloud metadata and credential address the major clouds document, in a refused range or not.
 * The allow-list opens one only with an entry naming exactly that address (`169.254.169.254` or
 * `169.254.169.254/32`), in any spelling; a wider range (`169.254.0.0/16`, `::ffff:0:0/96`) never does.
 */
export const metadataAddresses: readonly MetadataAddress[] = [
  {
    address: '169.254.169.254',
    name: 'AWS, Google Cloud, Azure IMDS, Oracle Cloud, DigitalOcean, OpenStack, Hetzner instance metadata',
  },
  { address: '169.254.170.2', name: 'AWS ECS task metadata and credentials' },
  { address: '169.254.170.23', name: 'AWS EKS Pod Identity Agent credentials' },
  { address: '169.254.0.23', name: 'Tencent Cloud instance metadata' },
  { address: '100.100.100.200', name: 'Alibaba Cloud instance metadata' },
  { address: '192.0.0.192', name: 'Oracle Cloud instance metadata (legacy)' },
  { address: '168.63.129.16', name: 'Azure WireServer and host services' },
  { address: 'fd00:ec2::254', name: 'AWS instance metadata over IPv6' },
  { address: 'fd00:ec2::23', name: 'AWS EKS Pod Identity Agent credentials over IPv6' },
  { address: 'fd20:ce::254', name: 'Google Cloud instance metadata over IPv6' },
];

/** The global unicast block; IPv6 outside it is refused even when no table entry names it. */
export const globalUnicastIpv6 = '2000::/3';

/** A table entry with its parsed range, ready to match. */
export interface ParsedRange {
  readonly range: BlockedRange;
  readonly cidr: [ipaddr.IPv4 | ipaddr.IPv6, number];
}

function parseTable(table: readonly BlockedRange[]): readonly ParsedRange[] {
  return table.map((range) => ({ range, cidr: ipaddr.parseCIDR(range.cidr) }));
}

/** The IPv4 table, parsed once. */
export const parsedIpv4Ranges = parseTable(blockedIpv4Ranges);
/** The metadata table, parsed once. */
export const parsedMetadataRanges = parseTable(blockedMetadataRanges);
/** The IPv6 table, parsed once. */
export const parsedIpv6Ranges = parseTable(blockedIpv6Ranges);
/** The parsed global unicast block. */
export const parsedGlobalUnicast = ipaddr.parseCIDR(globalUnicastIpv6) as [ipaddr.IPv6, number];
