import * as client from 'openid-client';
import { serverErrors } from '../errors.js';
import { loopbackHost, type OidcSettings, PERSON_ROLES, type PersonRole } from '../server/settings.js';
import type { PersonClaims } from './sessions.js';

// Single sign-on for people (docs/sso.md): OpenID Connect's authorization code flow with PKCE, state and nonce, through
// `openid-client` (its documented functions only). The provider is found by discovery from its issuer, once, when the
// first person signs in (a provider down at the server's start does not stop the server; a failed discovery is tried
// again by the next sign-in).

/** The longest any request to the provider may take (discovery, token, userinfo), in seconds. */
export const OIDC_REQUEST_TIMEOUT_SECONDS = 10;

/** What the browser carries between the start of a sign-in and its callback (a cookie of its own, 10 minutes). */
export interface SignInTransaction {
  state: string;
  nonce: string;
  verifier: string;
}

/** A completed sign-in: who the person is, their role in each namespace, and when their ID token expires. */
export interface SignedInPerson {
  person: PersonClaims;
  roles: Record<string, PersonRole>;
  idTokenExpiresAt: Date;
}

/** How capable a role is: a person with two mapped roles in one namespace gets the more capable one. */
const RANK: Record<PersonRole, number> = { approver: 1, user: 2, admin: 3 };

/** The values of the roles claim (a dotted path; a string or an array of strings), none when it is absent. */
export function claimValues(claims: Record<string, unknown>, path: string): string[] {
  let value: unknown = claims;
  for (const part of path.split('.')) {
    value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[part] : undefined;
  }
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

/** A person's role in each namespace: for every claim value mapped (MT_OIDC_ROLES), the most capable role. */
export function mappedRoles(values: string[], roles: OidcSettings['roles']): Record<string, PersonRole> {
  const out: Record<string, PersonRole> = {};
  for (const value of values) {
    // Own properties only: a claim value such as `__proto__` maps to nothing.
    if (!Object.hasOwn(roles, value)) continue;
    for (const [namespace, role] of Object.entries(roles[value]!)) {
      if (!PERSON_ROLES.includes(role)) continue;
      const had = out[namespace];
      if (had === undefined || RANK[role] > RANK[had]) out[namespace] = role;
    }
  }
  return out;
}

/** The sign-in of people through the configured provider. */
export class OidcSignIn {
  private config: Promise<client.Configuration> | undefined;

  constructor(readonly settings: OidcSettings) {}

  /** The provider's configuration by discovery, kept once found (a failure is tried again by the next sign-in). */
  private async configuration(): Promise<client.Configuration> {
    if (this.config === undefined) {
      const { issuer, clientId, clientSecret } = this.settings;
      const found = client.discovery(
        issuer,
        clientId,
        clientSecret,
        clientSecret === undefined ? client.None() : client.ClientSecretBasic(clientSecret),
        {
          timeout: OIDC_REQUEST_TIMEOUT_SECONDS,
          // http only for a provider on this machine (the settings refuse any other http issuer).
          ...(issuer.protocol === 'http:' && loopbackHost(issuer) ? { execute: [client.allowInsecureRequests] } : {}),
        },
      );
      this.config = found;
      found.catch(() => {
        if (this.config === found) this.config = undefined;
      });
    }
    try {
      const config = await this.config;
      config.timeout = OIDC_REQUEST_TIMEOUT_SECONDS;
      return config;
    } catch (error) {
      throw serverErrors.create('api:console:sso-unavailable', {
        issuer: this.settings.issuer.href,
        reason: (error as Error).message,
      });
    }
  }

  /** Where to send the browser to sign in, and what it must carry back (state, nonce, PKCE verifier). */
  async start(): Promise<{ url: URL; transaction: SignInTransaction }> {
    const config = await this.configuration();
    const verifier = client.randomPKCECodeVerifier();
    const transaction = { state: client.randomState(), nonce: client.randomNonce(), verifier };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.settings.redirectUri,
      scope: this.settings.scopes,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: transaction.state,
      nonce: transaction.nonce,
    });
    return { url, transaction };
  }

  /**
   * Completes a sign-in from the callback's query: the code exchanged with the PKCE verifier, the state and the ID
   * token's nonce, issuer, audience, signature and expiry checked (by openid-client); the roles claim read from the ID
   * token, else from the userinfo endpoint.
   */
  async finish(query: string, transaction: SignInTransaction): Promise<SignedInPerson> {
    const config = await this.configuration();
    // The callback as the provider was told it (MT_PUBLIC_URL's), whatever address a proxy forwarded it to.
    const callback = new URL(`${this.settings.redirectUri}${query}`);
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: transaction.verifier,
        expectedState: transaction.state,
        expectedNonce: transaction.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      throw this.failed(error);
    }
    const claims = tokens.claims();
    if (claims === undefined) throw this.failed(new Error('the provider sent no ID token'));
    let values = claimValues(claims, this.settings.rolesClaim);
    const text = (from: Record<string, unknown>, name: string) =>
      typeof from[name] === 'string' ? (from[name] as string) : null;
    let name = text(claims, 'name') ?? text(claims, 'preferred_username');
    let email = text(claims, 'email');
    // Many providers put the profile, the email and the groups in the userinfo answer only.
    if (values.length === 0 || name === null || email === null) {
      let info: Record<string, unknown> | undefined;
      try {
        info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
      } catch (error) {
        // A provider without a userinfo endpoint: the ID token's claims are all there is.
        if (config.serverMetadata().userinfo_endpoint !== undefined) throw this.failed(error);
      }
      if (info !== undefined) {
        if (values.length === 0) values = claimValues(info, this.settings.rolesClaim);
        name ??= text(info, 'name') ?? text(info, 'preferred_username');
        email ??= text(info, 'email');
      }
    }
    return {
      person: {
        issuer: claims.iss,
        subject: claims.sub,
        name,
        email,
      },
      roles: mappedRoles(values, this.settings.roles),
      idTokenExpiresAt: new Date(claims.exp * 1000),
    };
  }

  /** The provider's sign-out address (RP-initiated logout), or undefined when it offers none. */
  async endSessionUrl(): Promise<string | undefined> {
    let config: client.Configuration;
    try {
      config = await this.configuration();
    } catch {
      return undefined;
    }
    if (config.serverMetadata().end_session_endpoint === undefined) return undefined;
    return client
      .buildEndSessionUrl(config, {
        client_id: this.settings.clientId,
        post_logout_redirect_uri: this.settings.postLogoutRedirectUri,
      })
      .toString();
  }

  private failed(error: unknown) {
    const reason = error instanceof Error ? error.message : String(error);
    return serverErrors.create('api:console:sso-failed', { provider: this.settings.providerName, reason });
  }
}
