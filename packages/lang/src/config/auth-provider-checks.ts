import { checkConnectorUrl, type EgressPolicy, parseAllowList } from '@maitento/egress/static';
import { checkEndpointAddress } from './address-check.js';
import type { AuthProvider } from './resources.js';
import type { Reporter } from './report.js';
import { spanOf, type ValueTree } from './value-tree.js';

const ENDPOINT_KEYS = ['issuer', 'authorizationUrl', 'tokenUrl', 'resource'] as const;

/**
 * An auth provider's own checks: an issuer or both explicit endpoints; each a URL without credentials (an issuer
 * without query or fragment, RFC 8414 2), on an address the egress policy lets through; a client secret exactly
 * when the token endpoint authentication method uses one.
 */
export function checkAuthProvider(
  provider: AuthProvider,
  tree: ValueTree,
  reporter: Reporter,
  policy: EgressPolicy,
): void {
  const root = tree.root;
  if (provider.issuer === undefined && provider.resource === undefined) {
    const missing = (['authorizationUrl', 'tokenUrl'] as const).filter((key) => provider[key] === undefined);
    if (missing.length > 0) {
      reporter.report(
        'mtr:auth-provider:endpoints',
        {
          detail:
            missing.length === 2
              ? 'needs an issuer, a resource, or an authorizationUrl and a tokenUrl'
              : `with no issuer needs ${missing[0]} too`,
        },
        tree.file,
        undefined,
      );
    }
  } else {
    if (provider.issuer !== undefined && provider.resource !== undefined) {
      reporter.report(
        'mtr:auth-provider:endpoints',
        { detail: "gives an issuer and a resource: the issuer is the one the resource's metadata names" },
        tree.file,
        spanOf(tree, ['resource']),
      );
    }
    for (const key of ['authorizationUrl', 'tokenUrl'] as const) {
      if (provider[key] === undefined) continue;
      const from = provider.issuer === undefined ? 'a resource' : 'an issuer';
      reporter.report(
        'mtr:auth-provider:endpoints',
        { detail: `gives ${from} and ${key}: the endpoints come from the issuer's metadata` },
        tree.file,
        spanOf(tree, [key]),
      );
    }
  }
  for (const key of ENDPOINT_KEYS) {
    const value = provider[key];
    if (value === undefined) continue;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      reporter.report(
        'mtr:auth-provider:url',
        { key, detail: `${JSON.stringify(value)} is not a URL` },
        tree.file,
        spanOf(tree, [key]),
      );
      continue;
    }
    let detail: string | undefined;
    if (url.protocol !== 'https:' && url.protocol !== 'http:') detail = `must be http or https, not ${url.protocol}`;
    else if (url.username || url.password) detail = 'must not carry a user name or password';
    else if (key === 'issuer' && (url.search !== '' || url.hash !== ''))
      detail = 'must have no query or fragment (RFC 8414)';
    else if (key === 'resource' && url.hash !== '') detail = 'must have no fragment (RFC 9728)';
    // Plain http only to a server the operator's allow-list admits (one on their own network): a public address
    // passes without it, and its codes and tokens would cross the internet unencrypted.
    else if (url.protocol === 'http:' && checkConnectorUrl(value, { ...policy, allow: parseAllowList(undefined) }).ok)
      detail = 'is http:// on a public address; codes and tokens would cross the internet unencrypted: use https://';
    if (detail !== undefined) {
      reporter.report('mtr:auth-provider:url', { key, detail }, tree.file, spanOf(tree, [key]));
      continue;
    }
    checkEndpointAddress(value, key, tree, reporter, policy);
  }
  if (provider.clientId === undefined) {
    // No client id: the client is registered dynamically (RFC 7591) at the discovered authorization server, which
    // gives its secret; an issuer or a resource is needed to find that server.
    if (provider.issuer === undefined && provider.resource === undefined) {
      reporter.report(
        'mtr:auth-provider:client-secret',
        {
          detail: 'an auth provider with no clientId has its client registered at its issuer, and it names none',
          hint: 'add clientId = "<the client id registered at the provider>", or give issuer or resource (a server that offers dynamic client registration)',
        },
        tree.file,
        spanOf(tree, ['authorizationUrl']),
      );
    } else if (provider.clientSecret !== undefined) {
      reporter.report(
        'mtr:auth-provider:client-secret',
        {
          detail: 'clientSecret is given with no clientId: a registered client gets its secret from the registration',
          hint: 'remove clientSecret, or add the clientId it belongs to',
        },
        tree.file,
        spanOf(tree, ['clientSecret']),
      );
    }
    return;
  }
  if (provider.tokenAuthMethod === 'none' && provider.clientSecret !== undefined) {
    reporter.report(
      'mtr:auth-provider:client-secret',
      {
        detail: 'tokenAuthMethod = "none" is a public client, which sends no client secret',
        hint: 'remove clientSecret, or set tokenAuthMethod = "client_secret_basic" or "client_secret_post"',
      },
      tree.file,
      spanOf(tree, ['clientSecret']),
    );
  } else if (provider.tokenAuthMethod !== 'none' && provider.clientSecret === undefined) {
    reporter.report(
      'mtr:auth-provider:client-secret',
      {
        detail: `tokenAuthMethod = "${provider.tokenAuthMethod}" sends a client secret, and clientSecret names none`,
        hint: 'add clientSecret = @ref("<secret>") (create it with mt secret-create), or set tokenAuthMethod = "none" for a public client',
      },
      tree.file,
      spanOf(tree, root.tokenAuthMethod === undefined ? ['clientId'] : ['tokenAuthMethod']),
    );
  }
}
