// The OAuth 2 client of auth providers (docs/connections.md): panva's oauth4webapi makes and checks every request and
// response (discovery, PKCE, the authorization response's state and iss, the token response); this file only says
// which provider, which client and which connection (the egress policy's dispatcher, a deadline). No token is logged
// or put in an error message.
import type { EgressPolicy, Resolver } from '@maitento/egress';
import { createEgressAgent } from '@maitento/egress';
import { isMtError } from '@maitento/errors';
import type { AuthProvider } from '@maitento/lang';
import * as oauth from 'oauth4webapi';
import { type Dispatcher, fetch as undiciFetch } from 'undici';
import { gatewayErrors } from '../errors.js';

/** How long one request to an authorization server may take. */
export const OAUTH_REQUEST_TIMEOUT_MS = 10_000;

/** How long discovered metadata is kept per issuer. */
const METADATA_TTL_MS = 10 * 60_000;

/** What a token endpoint answered, as a connection keeps it. */
export interface GrantedTokens {
  accessToken: string;
  refreshToken?: string;
  tokenType: string;
  /** The scopes granted (the ones asked for when the answer names none). */
  scopes: string[];
  expiresAt: Date | null;
}

/** The start of an authorization: the URL for the end user, and what its callback needs (kept server-side). */
export interface AuthorizationStart {
  url: string;
  state: string;
  codeVerifier: string;
  nonce?: string;
}

/** A client registered dynamically at an authorization server (RFC 7591): never logged, its secret sealed. */
export interface RegisteredClient {
  clientId: string;
  clientSecret?: string;
  registrationAccessToken?: string;
  /** The client configuration endpoint (RFC 7592), where the server offers client management. */
  registrationClientUri?: string;
  /** The token endpoint auth method the server registered the client with. */
  tokenAuthMethod: string;
}

/** The OAuth 2 client of a process: one egress dispatcher, metadata cached per issuer. */
export interface OAuthClient {
  /** This process's redirect URI (MT_PUBLIC_URL + the callback path), when it has one: the one a client registers. */
  readonly redirectUri?: string;
  /** The issuer of a provider's authorization server (written, or discovered from its resource's metadata). */
  issuer(provider: AuthProvider): Promise<string>;
  /**
   * Registers a client for `provider` at its authorization server's `registration_endpoint` (RFC 7591), for the
   * authorization code grant (and refresh) at `redirectUri`. Rejects with `api:connections:provider-failed` when the
   * server offers no registration or refuses it.
   */
  register(provider: AuthProvider, redirectUri: string): Promise<RegisteredClient>;
  /** Builds the authorization URL of a connect link (PKCE S256, a fresh state, a nonce when `openid` is asked for). */
  startAuthorization(provider: AuthProvider, redirectUri: string, scopes: string[]): Promise<AuthorizationStart>;
  /**
   * Checks a callback's parameters (state, iss by RFC 9207, an error the provider sent) and exchanges its code with
   * the PKCE verifier at the token endpoint. Refuses with an `api:connections:*` code, never with a token.
   */
  finishAuthorization(
    provider: AuthProvider,
    clientSecret: string | undefined,
    callback: URL,
    link: { state: string; codeVerifier: string; nonce?: string; redirectUri: string; scopes: string[] },
  ): Promise<GrantedTokens>;
  /**
   * Refreshes an access token with the refresh token (RFC 6749 6). A provider that refuses the refresh token
   * (`invalid_grant`: revoked, expired, rotated away) is `api:connections:refresh-refused`; the connection then needs
   * its person again. Any other failure is `api:connections:provider-failed`.
   */
  refresh(
    provider: AuthProvider,
    clientSecret: string | undefined,
    refreshToken: string,
    scopes: string[],
  ): Promise<GrantedTokens>;
  /**
   * Asks the token endpoint for the client's own token (the client credentials grant, RFC 6749 4.4) with `scopes`.
   * Rejects with `api:connections:provider-failed` (or `api:connections:client-secret-missing`).
   */
  clientCredentials(provider: AuthProvider, clientSecret: string | undefined, scopes: string[]): Promise<GrantedTokens>;
  /**
   * Revokes a token at the provider (RFC 7009) when its metadata names a revocation endpoint; resolves false when it
   * names none (nothing to do), true once the provider accepted it. Rejects with `api:connections:provider-failed`.
   */
  revoke(provider: AuthProvider, clientSecret: string | undefined, token: string): Promise<boolean>;
  /**
   * Deletes a dynamically registered client at its server (RFC 7592): `DELETE` of its client configuration endpoint
   * with its registration access token as the Bearer. Resolves true once the server answered 204 (or 404: the client
   * is gone already); rejects with `api:connections:provider-failed` otherwise.
   */
  deleteRegistration(
    provider: AuthProvider,
    registrationClientUri: string,
    registrationAccessToken: string,
  ): Promise<boolean>;
  close(): Promise<void>;
}

function allowInsecure(provider: AuthProvider): boolean {
  const url = provider.issuer ?? provider.resource ?? provider.tokenUrl ?? '';
  return url.startsWith('http:');
}

function clientAuth(provider: AuthProvider, secret: string | undefined): oauth.ClientAuth {
  if (provider.tokenAuthMethod === 'none') return oauth.None();
  if (secret === undefined) {
    throw gatewayErrors.create('api:connections:client-secret-missing', {
      provider: provider.name,
      secret: provider.clientSecret ?? '',
    });
  }
  return provider.tokenAuthMethod === 'client_secret_post'
    ? oauth.ClientSecretPost(secret)
    : oauth.ClientSecretBasic(secret);
}

/** Creates the process's OAuth 2 client; its requests go through `policy` (or `dispatcher`, for tests). */
export function createOAuthClient(options: {
  policy: EgressPolicy;
  /** The process's redirect URI, which a dynamically registered client is registered with. */
  redirectUri?: string;
  resolver?: Resolver;
  dispatcher?: Dispatcher;
}): OAuthClient {
  const dispatcher =
    options.dispatcher ??
    createEgressAgent({
      policy: options.policy,
      ...(options.resolver ? { resolver: options.resolver } : {}),
      connect: { timeout: OAUTH_REQUEST_TIMEOUT_MS },
    });
  const metadata = new Map<string, { as: oauth.AuthorizationServer; until: number }>();

  const httpOptions = (provider: AuthProvider) => ({
    [oauth.customFetch]: (url: string, init: oauth.CustomFetchOptions<string, unknown>) =>
      undiciFetch(url, { ...(init as object), dispatcher } as Parameters<
        typeof undiciFetch
      >[1]) as unknown as Promise<Response>,
    [oauth.allowInsecureRequests]: allowInsecure(provider),
    signal: AbortSignal.timeout(OAUTH_REQUEST_TIMEOUT_MS),
  });

  const unreachable = (provider: AuthProvider, error: unknown) => {
    if (isMtError(error)) return error;
    const reason =
      error instanceof oauth.ResponseBodyError
        ? `${error.error}${error.error_description ? `: ${error.error_description}` : ''}`
        : error instanceof Error
          ? error.cause instanceof Error
            ? `${error.message} (${error.cause.message})`
            : error.message
          : String(error);
    return gatewayErrors.create('api:connections:provider-failed', { provider: provider.name, reason });
  };

  /**
   * The issuer of a provider that names a protected resource (a remote MCP server): the first authorization server
   * of the resource's metadata (RFC 9728), which must name that very resource.
   */
  async function issuerOf(provider: AuthProvider): Promise<string | undefined> {
    if (provider.issuer !== undefined || provider.resource === undefined) return provider.issuer;
    const resource = new URL(provider.resource);
    try {
      const response = await oauth.resourceDiscoveryRequest(resource, httpOptions(provider));
      const metadata = await oauth.processResourceDiscoveryResponse(resource, response);
      const issuer = metadata.authorization_servers?.[0];
      if (issuer === undefined) throw new Error('the protected-resource metadata names no authorization server');
      return issuer;
    } catch (error) {
      throw unreachable(provider, error);
    }
  }

  async function server(provider: AuthProvider): Promise<oauth.AuthorizationServer> {
    if (provider.issuer === undefined && provider.resource === undefined) {
      // No metadata: the endpoints as written; the issuer is the authorization endpoint's origin, and an `iss` in a
      // response is then checked against it (a provider without metadata does not send one).
      return {
        issuer: new URL(provider.authorizationUrl ?? '').origin,
        authorization_endpoint: provider.authorizationUrl,
        token_endpoint: provider.tokenUrl,
      };
    }
    const key = provider.issuer ?? `resource:${provider.resource}`;
    const known = metadata.get(key);
    if (known && known.until > Date.now()) return known.as;
    const issuer = new URL((await issuerOf(provider)) ?? '');
    let as: oauth.AuthorizationServer | undefined;
    let lastError: unknown;
    // OpenID Connect Discovery first (Google, Microsoft, most), then RFC 8414.
    for (const algorithm of ['oidc', 'oauth2'] as const) {
      try {
        const response = await oauth.discoveryRequest(issuer, { ...httpOptions(provider), algorithm });
        as = await oauth.processDiscoveryResponse(issuer, response);
        break;
      } catch (error) {
        lastError = error;
      }
    }
    if (as === undefined) throw unreachable(provider, lastError);
    metadata.set(key, { as, until: Date.now() + METADATA_TTL_MS });
    return as;
  }

  return {
    ...(options.redirectUri === undefined ? {} : { redirectUri: options.redirectUri }),

    async issuer(provider) {
      return (await server(provider)).issuer;
    },

    async register(provider, redirectUri) {
      const as = await server(provider);
      if (as.registration_endpoint === undefined) {
        throw gatewayErrors.create('api:connections:provider-failed', {
          provider: provider.name,
          reason: 'it names no client id and its metadata names no registration_endpoint',
        });
      }
      const method = provider.tokenAuthMethod;
      // The client credentials grant too where the server says it supports it: one client per issuer serves the
      // people's connections and the machine-to-machine connectors alike (decision 0336).
      const grantTypes = ['authorization_code', 'refresh_token'];
      if (as.grant_types_supported?.includes('client_credentials')) grantTypes.push('client_credentials');
      try {
        const response = await oauth.dynamicClientRegistrationRequest(
          as,
          {
            client_name: 'Maitento',
            redirect_uris: [redirectUri],
            grant_types: grantTypes,
            response_types: ['code'],
            token_endpoint_auth_method: method,
          },
          httpOptions(provider),
        );
        const client = await oauth.processDynamicClientRegistrationResponse(response);
        const registered: RegisteredClient = {
          clientId: client.client_id,
          tokenAuthMethod:
            typeof client.token_endpoint_auth_method === 'string' ? client.token_endpoint_auth_method : method,
        };
        if (typeof client.client_secret === 'string') registered.clientSecret = client.client_secret;
        if (typeof client.registration_access_token === 'string') {
          registered.registrationAccessToken = client.registration_access_token;
        }
        if (typeof client.registration_client_uri === 'string') {
          registered.registrationClientUri = client.registration_client_uri;
        }
        return registered;
      } catch (error) {
        throw unreachable(provider, error);
      }
    },

    async startAuthorization(provider, redirectUri, scopes) {
      const as = await server(provider);
      if (as.authorization_endpoint === undefined) {
        throw gatewayErrors.create('api:connections:provider-failed', {
          provider: provider.name,
          reason: 'its metadata names no authorization_endpoint',
        });
      }
      const codeVerifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const url = new URL(as.authorization_endpoint);
      for (const [key, value] of Object.entries(provider.authorizationParams)) url.searchParams.set(key, value);
      url.searchParams.set('client_id', provider.clientId ?? '');
      url.searchParams.set('redirect_uri', redirectUri);
      url.searchParams.set('response_type', 'code');
      if (scopes.length > 0) url.searchParams.set('scope', scopes.join(' '));
      url.searchParams.set('state', state);
      url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier));
      url.searchParams.set('code_challenge_method', 'S256');
      let nonce: string | undefined;
      if (scopes.includes('openid')) {
        nonce = oauth.generateRandomNonce();
        url.searchParams.set('nonce', nonce);
      }
      return { url: url.href, state, codeVerifier, ...(nonce === undefined ? {} : { nonce }) };
    },

    async finishAuthorization(provider, clientSecret, callback, link) {
      const as = await server(provider);
      const client: oauth.Client = { client_id: provider.clientId ?? '' };
      let params: URLSearchParams;
      try {
        params = oauth.validateAuthResponse(as, client, callback, link.state);
      } catch (error) {
        if (error instanceof oauth.AuthorizationResponseError) {
          throw gatewayErrors.create('api:connections:authorization-refused', {
            provider: provider.name,
            reason: `${error.error}${error.error_description ? `: ${error.error_description}` : ''}`,
          });
        }
        const message = error instanceof Error ? error.message : String(error);
        if (/"iss"/.test(message)) {
          throw gatewayErrors.create('api:connections:issuer-mismatch', { provider: provider.name, issuer: as.issuer });
        }
        throw gatewayErrors.create('api:connections:callback-invalid', { provider: provider.name, reason: message });
      }
      const auth = clientAuth(provider, clientSecret);
      try {
        const response = await oauth.authorizationCodeGrantRequest(
          as,
          client,
          auth,
          params,
          link.redirectUri,
          link.codeVerifier,
          httpOptions(provider),
        );
        const result = await oauth.processAuthorizationCodeResponse(as, client, response, {
          ...(link.nonce === undefined ? {} : { expectedNonce: link.nonce }),
        });
        return granted(result, link.scopes);
      } catch (error) {
        throw unreachable(provider, error);
      }
    },

    async refresh(provider, clientSecret, refreshToken, scopes) {
      const as = await server(provider);
      const client: oauth.Client = { client_id: provider.clientId ?? '' };
      const auth = clientAuth(provider, clientSecret);
      try {
        const response = await oauth.refreshTokenGrantRequest(as, client, auth, refreshToken, httpOptions(provider));
        const result = await oauth.processRefreshTokenResponse(as, client, response);
        const tokens = granted(result, scopes);
        // A provider that does not rotate refresh tokens answers none: the one used stays valid.
        return tokens.refreshToken === undefined ? { ...tokens, refreshToken } : tokens;
      } catch (error) {
        if (error instanceof oauth.ResponseBodyError && error.error === 'invalid_grant') {
          throw gatewayErrors.create('api:connections:refresh-refused', {
            provider: provider.name,
            reason: `${error.error}${error.error_description ? `: ${error.error_description}` : ''}`,
          });
        }
        throw unreachable(provider, error);
      }
    },

    async clientCredentials(provider, clientSecret, scopes) {
      const as = await server(provider);
      const client: oauth.Client = { client_id: provider.clientId ?? '' };
      const auth = clientAuth(provider, clientSecret);
      try {
        const parameters = new URLSearchParams();
        if (scopes.length > 0) parameters.set('scope', scopes.join(' '));
        const response = await oauth.clientCredentialsGrantRequest(as, client, auth, parameters, httpOptions(provider));
        return granted(await oauth.processClientCredentialsResponse(as, client, response), scopes);
      } catch (error) {
        throw unreachable(provider, error);
      }
    },

    async revoke(provider, clientSecret, token) {
      const as = await server(provider);
      if (as.revocation_endpoint === undefined) return false;
      const client: oauth.Client = { client_id: provider.clientId ?? '' };
      try {
        const response = await oauth.revocationRequest(
          as,
          client,
          clientAuth(provider, clientSecret),
          token,
          httpOptions(provider),
        );
        await oauth.processRevocationResponse(response);
        return true;
      } catch (error) {
        throw unreachable(provider, error);
      }
    },

    async deleteRegistration(provider, registrationClientUri, registrationAccessToken) {
      try {
        // oauth4webapi has no RFC 7592 call: its protected resource request sends the Bearer, through the egress.
        const response = await oauth.protectedResourceRequest(
          registrationAccessToken,
          'DELETE',
          new URL(registrationClientUri),
          new Headers(),
          null,
          httpOptions(provider),
        );
        await response.body?.cancel();
        if (response.status === 204 || response.status === 404) return true;
        throw new Error(`the client configuration endpoint answered ${response.status}`);
      } catch (error) {
        throw unreachable(provider, error);
      }
    },

    async close() {
      if (options.dispatcher === undefined) await dispatcher.close();
    },
  };
}

function granted(result: oauth.TokenEndpointResponse, asked: string[]): GrantedTokens {
  const scope = typeof result.scope === 'string' ? result.scope.split(' ').filter((s) => s !== '') : asked;
  return {
    accessToken: result.access_token,
    ...(typeof result.refresh_token === 'string' ? { refreshToken: result.refresh_token } : {}),
    tokenType: result.token_type,
    scopes: scope,
    expiresAt: typeof result.expires_in === 'number' ? new Date(Date.now() + result.expires_in * 1000) : null,
  };
}
