import { isIP } from 'node:net';
import {
  blockedNames,
  checkConnectorUrl,
  type EgressPolicy,
  egressErrors,
  isMetadataAddress,
  normalizeHostName,
  parseAllowList,
} from '@maitento/egress/static';
import { isPlatformPath, urlWithSampleParameters } from './connector-checks.js';
import type { Connector } from './resources.js';
import type { Reporter } from './report.js';
import { spanOf, type ValueTree } from './value-tree.js';

function blocked(reporter: Reporter, tree: ValueTree, host: string, reason: string, key = 'url'): void {
  const message = egressErrors.create('api:connectors:address-blocked', { host }).message;
  reporter.reportRaw('api:connectors:address-blocked', message, tree.file, spanOf(tree, [key]), reason);
}

/**
 * The address rule of an auth provider's endpoint (`issuer`, `authorizationUrl` or `tokenUrl`): the same as a
 * connector's, since the server calls the issuer's metadata and token endpoints through the same egress policy.
 */
export function checkEndpointAddress(
  url: string,
  key: string,
  tree: ValueTree,
  reporter: Reporter,
  policy: EgressPolicy,
): void {
  const verdict = checkConnectorUrl(url, policy);
  if (!verdict.ok) blocked(reporter, tree, verdict.host, refusalHint(url, verdict.host, verdict.reason, policy), key);
}

/**
 * The hint for a refused URL: the reason, and when the operator's allow-list would let the host through (a
 * loopback or private address, an internal name), how. `mt check` and `mt deploy` judge with their own
 * environment and the server judges again with its own, at deploy and at every call, so both need the entry.
 */
function refusalHint(sample: string, host: string, reason: string, policy: EgressPolicy): string {
  const entry = host.startsWith('[') ? host.slice(1, -1) : host;
  // A metadata service holds the host's credentials: an entry naming it exactly would open it, but no hint
  // suggests that (the address in any spelling, a metadata or cluster name). Other addresses of the ranges
  // metadata lives in (169.254.0.0/16, 100.64.0.0/10) are opened by an entry like any private address.
  if (isMetadataAddress(entry) || blockedNames.includes(normalizeHostName(entry))) {
    return reason;
  }
  let allowed = false;
  try {
    allowed = checkConnectorUrl(sample, { ...policy, allow: parseAllowList(entry) }).ok;
  } catch {
    allowed = false; // not something an allow-list entry can name
  }
  if (!allowed) return reason;
  // A name passes only when the addresses it resolves to pass too, at call time.
  const value = isIP(entry) === 0 ? `${entry},<the addresses it resolves to>` : entry;
  return `${reason}. For a server of your own, set MT_EGRESS_ALLOW=${value} in the environment of the Maitento server too, not only of mt check and mt deploy: the server checks again, at deploy and at every call`;
}

/**
 * The deploy-time address rule of a connector URL (its `{param}` placeholders replaced by `x`): a public
 * address, or for `auth = "Maitento"` the platform's own API (`platformOrigin`, from `MT_PUBLIC_URL`) and nothing else.
 */
export function checkConnectorAddress(
  connector: Connector,
  tree: ValueTree,
  reporter: Reporter,
  policy: EgressPolicy,
  platformOrigin: string | undefined,
): void {
  // A path on the platform is the platform's own API wherever the server runs: resolved at call time, not judged here.
  if (connector.auth === 'Maitento' && isPlatformPath(connector.url)) return;
  const sample = urlWithSampleParameters(connector.url);
  let url: URL;
  try {
    url = new URL(sample);
  } catch {
    return; // already reported as mtr:url:invalid
  }
  if (connector.auth === 'Maitento') {
    let origin: string | undefined;
    try {
      origin = platformOrigin ? new URL(platformOrigin).origin : undefined;
    } catch {
      origin = undefined;
    }
    if (origin === undefined) {
      blocked(
        reporter,
        tree,
        url.host,
        'auth = "Maitento" is only for the platform\'s own API, and no platform URL is configured (set MT_PUBLIC_URL)',
      );
    } else if (url.origin !== origin) {
      blocked(reporter, tree, url.host, `auth = "Maitento" may only call the platform's own API at ${origin}`);
    }
    return;
  }
  const verdict = checkConnectorUrl(sample, policy);
  if (!verdict.ok) blocked(reporter, tree, verdict.host, refusalHint(sample, verdict.host, verdict.reason, policy));
}
