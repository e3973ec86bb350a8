/**
 * Name suffixes that never lead to the public internet: special-use names (RFC 6761, RFC 6762,
 * RFC 8375, RFC 7686, RFC 9476) and the private top-level names people use inside networks (the
 * ICANN name-collision list and common practice). A name equal to a suffix or ending in `.suffix`
 * is refused.
 */
export const blockedNameSuffixes: readonly string[] = [
  'localhost',
  'local',
  'localdomain',
  'internal',
  'intranet',
  'private',
  'corp',
  'home',
  'lan',
  'arpa',
  'svc',
  'onion',
  'alt',
  'invalid',
];

/**
 * Names of cloud metadata services and in-cluster services that must never be called, also when
 * they would otherwise look public. Most already end in a refused suffix; listing them documents why.
 */
export const blockedNames: readonly string[] = [
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.internal',
  'metadata.tencentyun.com',
  'metadata.platformequinix.com',
  'kubernetes',
  'kubernetes.default',
  'kubernetes.default.svc',
  'host.docker.internal',
  'gateway.docker.internal',
];

/** Lower-cases a host name and removes trailing dots, so `LocalHost.` and `localhost` are judged alike. */
export function normalizeHostName(host: string): string {
  return host.toLowerCase().replace(/\.+$/, '');
}

/** The verdict on a host name: allowed, or refused with a reason. */
export type NameVerdict = { ok: true } | { ok: false; reason: string };

/**
 * Judges a host name (not an IP literal) by the name rules alone: special-use and internal names,
 * names without a dot, metadata names, malformed names, unless `allow` names it (a metadata or cluster
 * name only by an entry naming exactly it); a name `deny` names is refused whatever `allow` says. The
 * addresses it resolves to are judged later.
 */
export function checkHostName(
  host: string,
  allow?: { allowsName(name: string): boolean; namesNameExactly?(name: string): boolean },
  deny?: { deniesName(name: string): boolean },
): NameVerdict {
  const name = normalizeHostName(host);
  if (name === '') return { ok: false, reason: 'the host is empty' };
  if (name.includes('{') || name.includes('}')) {
    return {
      ok: false,
      reason: 'the host contains a {parameter}, which would let a caller choose where the call goes',
    };
  }
  const labels = name.split('.');
  if (labels.some((label) => label === '')) return { ok: false, reason: 'the host has an empty label (..)' };
  if (labels.some((label) => label.length > 63) || name.length > 253) {
    return { ok: false, reason: 'the host is longer than DNS allows' };
  }
  if (deny?.deniesName(name)) return { ok: false, reason: "the operator's deny list (MT_EGRESS_DENY) names it" };
  // A metadata or cluster name is lifted only by an entry naming exactly it, never by a *.suffix entry.
  if (blockedNames.includes(name)) {
    return allow?.namesNameExactly?.(name)
      ? { ok: true }
      : { ok: false, reason: `${name} is a cloud or cluster metadata name` };
  }
  // An operator's allow-list entry lifts the name rules only; the addresses are still judged.
  if (allow?.allowsName(name)) return { ok: true };
  for (const suffix of blockedNameSuffixes) {
    // Plain `localhost` is named as itself: "names ending in .localhost" would send the reader looking for a dot.
    if (name === suffix) return { ok: false, reason: `${name} is a special-use or internal name, never a public one` };
    if (name.endsWith(`.${suffix}`)) return { ok: false, reason: `names ending in .${suffix} are not public` };
  }
  if (labels.length < 2) return { ok: false, reason: 'a name without a dot is an internal name' };
  if (/^(\d+|0x[0-9a-f]*)$/.test(labels[labels.length - 1])) {
    return { ok: false, reason: 'the host ends in a number but is not a canonical IP address' };
  }
  return { ok: true };
}
