// The whole package: the address rules of `./static.ts` (no network, the `@maitento/egress/static` entry point) and
// what opens connections with them: the egress agent and the resolvers.
export {
  createEgressAgent,
  createEgressLookup,
  type EgressAgentOptions,
  type EgressLookup,
  type LookupCallback,
} from './agent/egress-agent.js';
export { authorizeUrl } from './resolve/authorize-url.js';
export {
  createCachingResolver,
  pinnedResolver,
  type ResolvedAddress,
  type Resolver,
  systemResolver,
} from './resolve/resolver.js';
export * from './static.js';
