// `@maitento/egress/static`: the address rules without the network. What judges an address or a URL as written
// (policy, host names, address ranges, static URL checks) and opens no connection, so it loads without undici: the
// config compiler (`mt check`, `mt lsp`) imports this entry point, the gateway and the engine the whole package.
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
export { type ConnectorUrlVerdict, checkConnectorUrl } from './url/check-connector-url.js';
export { checkUrlStatically, type UrlVerdict } from './url/check-url.js';
