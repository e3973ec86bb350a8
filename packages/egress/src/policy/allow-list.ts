import ipaddr from 'ipaddr.js';
import { canonicalIp } from '../address/canonical.js';
import { egressErrors } from '../errors.js';
import { normalizeHostName } from '../names/host-name.js';

/** The operator's allow-list: named private ranges and names let through (empty by default). */
export interface AllowList {
  /** The entries as the operator wrote them, normalised. */
  readonly entries: readonly string[];
  /** True when `address` (a parsed IP) lies in one of the allowed ranges. */
  allowsAddress(address: ipaddr.IPv4 | ipaddr.IPv6): boolean;
  /**
   * True when an entry names exactly `address`: a /128 entry equal to it, or a /32 entry equal to it or to
   * the IPv4 address it carries (IPv4-mapped, NAT64, ...). A wider range never does.
   */
  namesAddressExactly(address: ipaddr.IPv4 | ipaddr.IPv6): boolean;
  /** True when the host name (already normalised) is allowed by name or by a `*.suffix` entry. */
  allowsName(name: string): boolean;
  /** True when an entry is exactly this host name (already normalised); a `*.suffix` entry never is. */
  namesNameExactly(name: string): boolean;
}

/** The operator's deny list: ranges and names refused even when public or allowed (empty by default). */
export interface DenyList {
  /** The entries as the operator wrote them, normalised. */
  readonly entries: readonly string[];
  /** True when `address` (a parsed IP) lies in one of the denied ranges. */
  deniesAddress(address: ipaddr.IPv4 | ipaddr.IPv6): boolean;
  /** True when the host name (already normalised) is denied by name or by a `*.suffix` entry. */
  deniesName(name: string): boolean;
}

const NAME_ENTRY = /^(\*\.)?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/;

type ListKind = 'api:egress:invalid-allow-list' | 'api:egress:invalid-deny-list';
type Invalid = (entry: string, reason: string) => Error;

function invalidFor(code: ListKind): Invalid {
  return (entry, reason) => egressErrors.create(code, { entry, reason });
}

function parseRangeEntry(entry: string, invalid: Invalid): [ipaddr.IPv4 | ipaddr.IPv6, number] {
  const slash = entry.indexOf('/');
  const ipText = slash === -1 ? entry : entry.slice(0, slash);
  // Only canonical addresses: `0x7f.1` or `127.1` in an allow-list is more likely a typo than intent.
  if (!ipaddr.IPv4.isValidFourPartDecimal(ipText) && !ipaddr.IPv6.isValid(ipText)) {
    throw invalid(entry, 'not an IP address in canonical form');
  }
  if (ipText.includes('%')) throw invalid(entry, 'zone ids are not supported');
  const address = ipaddr.parse(ipText);
  const bits = address.kind() === 'ipv4' ? 32 : 128;
  let prefix = bits;
  if (slash !== -1) {
    const prefixText = entry.slice(slash + 1);
    if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > bits) {
      throw invalid(entry, `the prefix length must be a number from 1 to ${bits}`);
    }
    prefix = Number(prefixText);
  }
  if (prefix === 0) throw invalid(entry, 'a /0 range names every address; name the ranges you mean');
  const network = ipaddr.parse(
    address.kind() === 'ipv4'
      ? ipaddr.IPv4.networkAddressFromCIDR(`${ipText}/${prefix}`).toString()
      : ipaddr.IPv6.networkAddressFromCIDR(`${ipText}/${prefix}`).toString(),
  );
  if (network.toString() !== address.toString()) {
    throw invalid(entry, `it has bits set past the /${prefix} prefix; did you mean ${network.toString()}/${prefix}?`);
  }
  return [address, prefix];
}

function parseNameEntry(entry: string, invalid: Invalid): string {
  if (entry.includes(':')) throw invalid(entry, 'ports are not part of an entry; write the host name alone');
  const name = normalizeHostName(entry);
  if (name === '*' || !NAME_ENTRY.test(name)) {
    throw invalid(entry, 'not a CIDR, an IP address or a host name (a leading "*." is the only wildcard)');
  }
  if (/^\d+$/.test(name.slice(name.lastIndexOf('.') + 1))) {
    throw invalid(entry, 'a name cannot end in a number; write an IP address in canonical form');
  }
  return name;
}

interface ParsedList {
  entries: readonly string[];
  matchesAddress(address: ipaddr.IPv4 | ipaddr.IPv6): boolean;
  namesAddressExactly(address: ipaddr.IPv4 | ipaddr.IPv6): boolean;
  matchesName(name: string): boolean;
  namesNameExactly(name: string): boolean;
}

/** Parses a comma-separated list of CIDRs, IPs, names and `*.suffix` names, the syntax both lists share. */
function parseHostList(input: string | readonly string[] | undefined, invalid: Invalid): ParsedList {
  const raw =
    input === undefined ? [] : typeof input === 'string' ? input.split(',') : input.flatMap((e) => e.split(','));
  const ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];
  const exact = new Set<string>();
  const suffixes: string[] = [];
  const entries: string[] = [];
  for (const item of raw) {
    const entry = item.trim();
    if (entry === '') continue;
    if (entry.includes('://')) throw invalid(entry, 'it is a URL; write the host name alone');
    if (/[\s\\@?#]/.test(entry)) {
      throw invalid(entry, 'it contains a character no CIDR or host name has');
    }
    const looksLikeAddress = entry.includes('/') || ipaddr.isValid(entry) || /^[0-9.]+$/.test(entry);
    if (looksLikeAddress) {
      const range = parseRangeEntry(entry, invalid);
      ranges.push(range);
      entries.push(`${range[0].toString()}/${range[1]}`);
    } else {
      const name = parseNameEntry(entry, invalid);
      if (name.startsWith('*.')) suffixes.push(name.slice(1));
      else exact.add(name);
      entries.push(name);
    }
  }
  return {
    entries: Object.freeze(entries),
    matchesAddress(address) {
      // An IPv4 range also covers the IPv4-mapped and NAT64 forms, which check-address unwraps before asking.
      return ranges.some(([net, prefix]) => net.kind() === address.kind() && address.match(net, prefix));
    },
    namesAddressExactly(address) {
      const carried = canonicalIp(address);
      return ranges.some(
        ([net, prefix]) =>
          prefix === (net.kind() === 'ipv4' ? 32 : 128) &&
          ((net.kind() === address.kind() && net.toString() === address.toString()) ||
            (net.kind() === 'ipv4' && carried.kind() === 'ipv4' && net.toString() === carried.toString())),
      );
    },
    matchesName(name) {
      return exact.has(name) || suffixes.some((suffix) => name.endsWith(suffix) && name.length > suffix.length);
    },
    namesNameExactly(name) {
      return exact.has(name);
    },
  };
}

/** Parses a comma-separated allow-list (or a list of entries); throws `api:egress:invalid-allow-list` on a bad entry. */
export function parseAllowList(input: string | readonly string[] | undefined): AllowList {
  const list = parseHostList(input, invalidFor('api:egress:invalid-allow-list'));
  return Object.freeze({
    entries: list.entries,
    allowsAddress: list.matchesAddress,
    namesAddressExactly: list.namesAddressExactly,
    allowsName: list.matchesName,
    namesNameExactly: list.namesNameExactly,
  });
}

/**
 * Parses the operator's deny list (`MT_EGRESS_DENY`, same syntax as the allow-list); throws
 * `api:egress:invalid-deny-list` on a bad entry.
 */
export function parseDenyList(input: string | readonly string[] | undefined): DenyList {
  const list = parseHostList(input, invalidFor('api:egress:invalid-deny-list'));
  return Object.freeze({
    entries: list.entries,
    deniesAddress: list.matchesAddress,
    deniesName: list.matchesName,
  });
}
