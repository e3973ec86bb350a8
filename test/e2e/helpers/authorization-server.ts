import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { freePort } from '@maitento/testkit';
import Provider from 'oidc-provider';

// A real OAuth 2 / OpenID Connect authorization server for the connection tests: panva's certified `oidc-provider`
// on 127.0.0.1. Its login and consent are completed by its own interaction API (interactionDetails /
// interactionFinished) for the account a test's user agent names in the `x-test-account` header: a person signing
// in, without a browser. Nothing here stands in for Maitento's side of the flow.

/** testkit's: a port free on 127.0.0.1, outside the kernel's ephemeral range. */
export { freePort };

/** The authorization server: its issuer, its one client, and the tokens it issued (to look for leaks). */
export interface AuthorizationServer {
  issuer: string;
  clientId: string;
  clientSecret: string;
  provider: Provider;
  /** The clients registered dynamically (RFC 7591), with `registration`: their ids, in order. */
  registered: string[];
  close(): Promise<void>;
}

/** Starts the authorization server with one confidential client whose only redirect URI is `redirectUri`. */
export async function startAuthorizationServer(options: {
  redirectUri: string;
  accessTokenTtl?: number;
  /** Offers open dynamic client registration (RFC 7591) at /reg, and client management (RFC 7592). */
  registration?: boolean;
  /**
   * Asked of each request first: true parks it unanswered and unread (the provider never sees it) until the client
   * goes away or the server closes (a token endpoint held open while a test kills its caller).
   */
  hold?: (req: IncomingMessage) => boolean;
}): Promise<AuthorizationServer> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const clientId = 'maitento-e2e';
  const clientSecret = `as-client-secret-${Math.random().toString(36).slice(2)}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    scopes: ['openid', 'offline_access', 'calendar.read'],
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      introspection: { enabled: true },
      revocation: { enabled: true },
      clientCredentials: { enabled: true },
      registration: { enabled: options.registration === true },
      // RFC 7592: a registered client is read, updated and deleted at its registration_client_uri.
      registrationManagement: { enabled: options.registration === true },
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
    ttl: {
      AccessToken: options.accessTokenTtl ?? 3600,
      ClientCredentials: options.accessTokenTtl ?? 3600,
    },
    cookies: { keys: ['e2e-cookie-key'] },
  });
  const registered: string[] = [];
  provider.on('registration_create.success', (_ctx: unknown, client: { clientId: string }) => {
    registered.push(client.clientId);
  });
  const callback = provider.callback();
  const server: Server = createServer((req, res) => {
    if (options.hold?.(req) === true) return;
    if (req.url?.startsWith('/interaction/')) {
      interact(provider, req, res).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
      return;
    }
    callback(req, res);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    issuer,
    clientId,
    clientSecret,
    provider,
    registered,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// Signs in the account the user agent names, then grants what the client asked for.
async function interact(provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  const account = String(req.headers['x-test-account'] ?? '');
  if (details.prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: account } }, { mergeWithLastSubmission: false });
    return;
  }
  const { params, session } = details;
  const missing = details.prompt.details as {
    missingOIDCScope?: string[];
    missingResourceScopes?: Record<string, string[]>;
  };
  const grant = new provider.Grant({ accountId: session?.accountId ?? account, clientId: String(params.client_id) });
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

/**
 * A person's browser, reduced to what the flow needs: it follows the redirects of `url` with the cookies the
 * authorization server sets, as `account`, and stops at the first redirect to `stopAt` (the callback), which it
 * returns without opening it.
 */
export async function authorize(url: string, account: string, stopAt: string): Promise<URL> {
  const cookies = new Map<string, string>();
  let next = url;
  for (let hop = 0; hop < 20; hop++) {
    if (next.startsWith(stopAt)) return new URL(next);
    const response = await fetch(next, {
      redirect: 'manual',
      headers: {
        'x-test-account': account,
        cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
      },
      signal: AbortSignal.timeout(10_000),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
    }
    const location = response.headers.get('location');
    if (location === null) {
      throw new Error(`the authorization stopped at ${next} with ${response.status}: ${await response.text()}`);
    }
    next = new URL(location, next).href;
  }
  throw new Error('the authorization did not come back in 20 redirects');
}

/** A file of a config repo: its path and its text. */
interface RepoFile {
  path: string;
  content: string;
}

/**
 * `auth-providers/local-as.mtr`: the test authorization server `as` as an auth provider, found by its `issuer` or, for
 * a remote MCP server, by the protected resource `resource` names (RFC 9728), with its client secret in the secret
 * `secret` (default `local-as-client-secret`), the scopes `openid` and `offline_access`, and `prompt=consent`.
 */
export function localAsProvider(
  as: AuthorizationServer,
  by: { issuer: string } | { resource: string },
  secret = 'local-as-client-secret',
): RepoFile {
  const where = 'issuer' in by ? `issuer = "${by.issuer}"` : `resource = "${by.resource}"`;
  return {
    path: 'auth-providers/local-as.mtr',
    content: `${where}
clientId = "${as.clientId}"
clientSecret = @ref("${secret}")
scopes = ["openid", "offline_access"]
authorizationParams = { prompt = "consent" }
`,
  };
}

/**
 * `connectors/mcp/calendar.mtr`: the protected MCP server's `next_meeting` tool at `url`, called with a person's
 * OAuth2 token from the auth provider `provider` and the scope `calendar.read`.
 */
export function calendarMcpConnector(url: string, provider: string): RepoFile {
  return {
    path: 'connectors/mcp/calendar.mtr',
    content: `url = "${url}"
tool = "next_meeting"
description = "The signed-in person's next meeting on a given day."
auth = "OAuth2"
provider = @ref("${provider}")
scopes = ["calendar.read"]
`,
  };
}

/**
 * Answers an upstream's request by the bearer token `found` looked up at the authorization server (`as.provider`'s
 * `AccessToken.find` or `ClientCredentials.find`): 401 `invalid_token` when there is none, it has expired or `refuse`
 * is set, else 200 with `body(found)`; 500 when the lookup fails.
 */
export function answerBearer<T extends { isExpired: boolean }>(
  res: ServerResponse,
  found: Promise<T | undefined>,
  body: (found: T) => unknown,
  refuse = false,
): void {
  res.setHeader('content-type', 'application/json');
  found.then(
    (token) => {
      if (token === undefined || token.isExpired || refuse) {
        res.statusCode = 401;
        res.end(JSON.stringify({ error: 'invalid_token' }));
        return;
      }
      res.end(JSON.stringify(body(token)));
    },
    () => {
      res.statusCode = 500;
      res.end('{}');
    },
  );
}
