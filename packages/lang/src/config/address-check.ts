import { checkConnectorUrl, type EgressPolicy, egressErrors } from '@maitento/egress';
import { urlWithSampleParameters } from './connector-checks.js';
import type { Connector } from './resources.js';
import type { Reporter } from './report.js';
import { spanOf, type ValueTree } from './value-tree.js';

function blocked(reporter: Reporter, tree: ValueTree, host: string, reason: string): void {
  const message = egressErrors.create('api:connectors:address-blocked', { host }).message;
  reporter.reportRaw('api:connectors:address-blocked', message, tree.file, spanOf(tree, ['url']), reason);
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
  if (!verdict.ok) blocked(reporter, tree, verdict.host, verdict.reason);
}
