export { type AddressLists, type AddressVerdict, checkAddress, isMetadataAddress } from './address/check-address.js';
export {
  type BlockedRange,
  blockedIpv4Ranges,
  blockedIpv6Ranges,
  blockedMetadataRanges,
  globalUnicastIpv6,
  type MetadataAddress,
  metadataAddresses,
} from './address/ranges.js';
export {
  createEgressAgent,
  createEgressLookup,
  type EgressAgentOptions,
  type EgressLookup,
  type LookupCallback,
} from './agent/egress-agent.js';
export { addressBlockedError, egressErrors } from './errors.js';
export { BoundedMap } from './internal/bounded-map.js';
export {
  blockedNameSuffixes,
  blockedNames,
  checkHostName,
  type NameVerdict,
  normalizeHostName,
} from './names/host-name.js';
export { type AllowList, type DenyList, parseAllowList, parseDenyList } from './policy/allow-list.js';
export {
  createEgressPolicy,
  type EgressPolicy,
  effectivePort,
  egressPolicyFromEnv,
  isPlatformAddress,
  isPlatformHost,
} from './policy/egress-policy.js';
export { authorizeUrl } from './resolve/authorize-url.js';
export {
  createCachingResolver,
  pinnedResolver,
  type ResolvedAddress,
  type Resolver,
  systemResolver,
} from './resolve/resolver.js';
export { type ConnectorUrlVerdict, checkConnectorUrl } from './url/check-connector-url.js';
export { checkUrlStatically, type UrlVerdict } from './url/check-url.js';
