import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { AllowList, DenyList } from '../policy/allow-list.js';
import { canonicalIp, carriedIpv4 } from './canonical.js';
import {
  metadataAddresses,
  type ParsedRange,
  parsedGlobalUnicast,
  parsedIpv4Ranges,
  parsedIpv6Ranges,
  parsedMetadataRanges,
} from './ranges.js';

/** The verdict on one IP address: allowed, or refused with the range it lies in and why. */
export type AddressVerdict = { ok: true } | { ok: false; range: string; reason: string };

/** Removes the brackets `URL.hostname` puts around an IPv6 literal. */
export function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function inTable(address: ipaddr.IPv4 | ipaddr.IPv6, table: readonly ParsedRange[]): ParsedRange | undefined {
  return table.find(({ cidr }) => cidr[0].kind() === address.kind() && address.match(cidr));
}

/** The lists an address is judged by: the operator's allow-list, and the deny list that wins over it. */
export interface AddressLists {
  readonly allow: AllowList;
  readonly deny?: DenyList;
}

const OPERATOR_DENIED = { range: 'MT_EGRESS_DENY', reason: "the operator's deny list (MT_EGRESS_DENY)" };

/** The metadata addresses by canonical text. */
const metadataByAddress = new Map(metadataAddresses.map((m) => [m.address, m]));

/**
 * The refusal of a cloud metadata address (in any spelling) that the allow-list lets through only by a
 * wider range: metadata needs an entry naming exactly its address. `undefined` when the rule does not apply.
 */
function metadataRefusal(address: ipaddr.IPv4 | ipaddr.IPv6, allow: AllowList): AddressVerdict | undefined {
  const metadata = metadataByAddress.get(canonicalIp(address).toString());
  if (metadata === undefined || allow.namesAddressExactly(address)) return undefined;
  const own = `${metadata.address}/${metadata.address.includes(':') ? 128 : 32}`;
  const carrier = address.kind() === 'ipv6' ? carriedIpv4(address as ipaddr.IPv6) : undefined;
  return {
    ok: false,
    range: carrier === undefined ? own : `${carrier.prefix} carrying ${own}`,
    reason: `cloud metadata service (${metadata.name}), which no allow-list range opens`,
  };
}

function judgeIpv4(address: ipaddr.IPv4, lists: AddressLists): AddressVerdict {
  if (lists.deny?.deniesAddress(address)) return { ok: false, ...OPERATOR_DENIED };
  if (lists.allow.allowsAddress(address)) return metadataRefusal(address, lists.allow) ?? { ok: true };
  const hit = inTable(address, parsedIpv4Ranges) ?? inTable(address, parsedMetadataRanges);
  if (hit) return { ok: false, range: hit.range.cidr, reason: hit.range.name };
  return { ok: true };
}

/**
 * The IPv6 forms unwrapped and judged by the IPv4 address they carry; the other carrying forms (SIIT,
 * local-use NAT64, 6to4, IPv4-compatible) are refused outright by the IPv6 table.
 */
const UNWRAPPED_FORMS: ReadonlyMap<string, string> = new Map([
  ['::ffff:0:0/96', 'IPv4-mapped'],
  ['64:ff9b::/96', 'NAT64'],
]);

function judgeIpv6(address: ipaddr.IPv6, lists: AddressLists): AddressVerdict {
  if (lists.deny?.deniesAddress(address)) return { ok: false, ...OPERATOR_DENIED };
  // Every IPv6 form carrying an IPv4 address (IPv4-mapped, SIIT, NAT64, 6to4, IPv4-compatible) can reach
  // that address: a deny entry naming it refuses them, whatever the allow-list says of the form.
  const carried = carriedIpv4(address);
  if (carried !== undefined && lists.deny?.deniesAddress(carried.ipv4)) return { ok: false, ...OPERATOR_DENIED };
  const allow = lists.allow;
  if (allow.allowsAddress(address)) return metadataRefusal(address, allow) ?? { ok: true };
  // IPv4-mapped and NAT64 addresses reach the IPv4 address they carry, so that address is judged;
  // ipaddr.js's own range() is not trusted here (it calls ::7f00:1 "unicast").
  const label = carried === undefined ? undefined : UNWRAPPED_FORMS.get(carried.prefix);
  if (carried !== undefined && label !== undefined) {
    const verdict = judgeIpv4(carried.ipv4, lists);
    if (verdict.ok) return verdict;
    return {
      ok: false,
      range: `${carried.prefix} carrying ${verdict.range}`,
      reason: `${label} form of ${verdict.reason}`,
    };
  }
  const hit = inTable(address, parsedIpv6Ranges);
  if (hit) return { ok: false, range: hit.range.cidr, reason: hit.range.name };
  if (!address.match(parsedGlobalUnicast)) {
    return { ok: false, range: `outside 2000::/3`, reason: 'not in the global unicast block' };
  }
  return { ok: true };
}

/**
 * Judges a parsed IP address against the deny list, the allow-list and the refused ranges, in that order;
 * a cloud metadata address passes the allow-list only when an entry names exactly that address.
 */
export function judgeAddress(address: ipaddr.IPv4 | ipaddr.IPv6, lists: AddressLists): AddressVerdict {
  return address.kind() === 'ipv4'
    ? judgeIpv4(address as ipaddr.IPv4, lists)
    : judgeIpv6(address as ipaddr.IPv6, lists);
}

/**
 * Parses an IP in the canonical forms DNS answers and `URL.hostname` use (dotted-quad IPv4, IPv6
 * with or without brackets); anything else is `undefined`, never guessed at.
 */
export function parseCanonicalIp(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const text = unbracket(ip);
  if (isIP(text) === 0) return undefined;
  try {
    return ipaddr.parse(text);
  } catch {
    return undefined;
  }
}

/** True when `ip` (brackets allowed) is a cloud metadata address in any spelling (IPv4-mapped, NAT64, ...). */
export function isMetadataAddress(ip: string): boolean {
  const address = parseCanonicalIp(ip);
  return address !== undefined && metadataByAddress.has(canonicalIp(address).toString());
}

/** Judges one IP address (as text) by the refused ranges and the policy's allow and deny lists. */
export function checkAddress(ip: string, policy: AddressLists): AddressVerdict {
  const address = parseCanonicalIp(ip);
  if (address === undefined) return { ok: false, range: 'invalid', reason: 'not an IP address in canonical form' };
  return judgeAddress(address, policy);
}
