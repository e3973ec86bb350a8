// The access token of an OAuth2 connector's call (docs/connections.md): the run's end user's connection at the
// connector's auth provider, refreshed with its refresh token when it has expired (at most once at a time across
// every process: store/connections refreshConnection locks the row without waiting on it, and within a process the
// callers of one connection share one refresh). No token is logged or put in an error.
import { isMtError } from '@maitento/errors';
import { type CallCredential, gatewayErrors, type OAuthClient } from '@maitento/gateway';
import type { AuthProvider, Connector } from '@maitento/lang';
import {
  type ConnectionForCall,
  type ConnectionTokens,
  type Db,
  findConnectionForCall,
  getAnyVersion,
  REFRESH_BUSY,
  REFRESH_WAIT_MS,
  type RefreshOutcome,
  refreshConnection,
  registerOAuthClientOnce,
  type SecretKeys,
  reserveConnection,
  type StoredVersion,
} from '@maitento/store';

/**
 * The client a provider's requests use, and its secret: the one written (`clientId`, `clientSecret`), or, for a
 * provider that names none, the client registered dynamically (RFC 7591) at its authorization server for this
 * namespace and this process's redirect URI: registered once across every process (store/oauth-clients), stored with
 * its secret sealed, and used by connect links, callbacks, refreshes, client credentials and revocation alike.
 */
export async function providerClient(
  deps: { db: Db; secretKey: SecretKeys; readSecret: (name: string) => Promise<string | undefined> },
  oauth: OAuthClient,
  namespace: string,
  provider: AuthProvider,
  /** The redirect URI to register with (the process's by default). */
  redirectUri: string | undefined = oauth.redirectUri,
): Promise<{ provider: AuthProvider; secret: string | undefined }> {
  if (provider.clientId !== undefined) {
    const secret = provider.clientSecret === undefined ? undefined : await deps.readSecret(provider.clientSecret);
    return { provider, secret };
  }
  if (redirectUri === undefined) {
    throw gatewayErrors.create('api:connections:provider-failed', {
      provider: provider.name,
      reason: 'registering a client needs this server to have a redirect URI (MT_PUBLIC_URL)',
    });
  }
  const issuer = await oauth.issuer(provider);
  const registered = await registerOAuthClientOnce(deps.db, deps.secretKey, { namespace, issuer, redirectUri }, () =>
    oauth.register(provider, redirectUri),
  );
  return {
    provider: {
      ...provider,
      clientId: registered.clientId,
      tokenAuthMethod: registered.tokenAuthMethod as AuthProvider['tokenAuthMethod'],
    },
    secret: registered.clientSecret,
  };
}

/**
 * The refreshes (or client credentials grants) in flight in this process, by connection: the calls of one connection
 * that find it stale at once share one (single-flight), so that one pooled connection at most is used for it and
 * one waiter a process tries the row while another process refreshes it.
 */
const inFlight = new Map<string, Promise<ConnectionForCall | undefined>>();

/**
 * Connection `id` refreshed by `refresh` (store/connections refreshConnection), shared with the calls of this process
 * that ask for the same connection meanwhile. Rejects with `api:connections:refresh-busy` when another process held
 * its row past the wait's deadline (nothing sent).
 */
function refreshShared(
  deps: ConnectionTokenDeps,
  namespace: string,
  id: string,
  identity: { provider: string; endUser: string },
  isStale: (connection: ConnectionForCall) => boolean,
  refresh: (connection: ConnectionForCall) => Promise<RefreshOutcome>,
  shared = true,
): Promise<ConnectionForCall | undefined> {
  const key = `${namespace}\u0000${id}`;
  const running = shared ? inFlight.get(key) : undefined;
  if (running !== undefined) return running;
  const made = (async () => {
    const result = await refreshConnection(deps.db, deps.secretKey, namespace, id, isStale, refresh);
    if (result === REFRESH_BUSY) {
      throw gatewayErrors.create('api:connections:refresh-busy', { ...identity, waitMs: REFRESH_WAIT_MS });
    }
    return result;
  })();
  if (!shared) return made;
  inFlight.set(key, made);
  const forget = () => {
    if (inFlight.get(key) === made) inFlight.delete(key);
  };
  made.then(forget, forget);
  return made;
}

/** An access token this close to its expiry is refreshed before the call rather than sent. */
export const REFRESH_MARGIN_MS = 5_000;

/** What finding a call's token needs. */
export interface ConnectionTokenDeps {
  db: Db;
  secretKey: SecretKeys;
  /** The process's OAuth client (refreshes); without one an expired token needs its person again. */
  oauth?: () => OAuthClient;
  /** Reads a secret's value by name (an auth provider's client secret). */
  readSecret: (name: string) => Promise<string | undefined>;
}

/** Why a call's end user must connect (again), and at which provider with which scopes. */
export interface AuthorizationNeed {
  provider: string;
  /** The pinned version of the provider. */
  providerVersion: number;
  endUser: string;
  /** What the connection lacks: "not connected", "re-authorisation needed", "missing scopes: ...". */
  reason: string;
  /** The scopes to ask for: the provider's and the connector's. */
  scopes: string[];
}

function stale(connection: ConnectionForCall): boolean {
  return connection.expiresAt !== null && connection.expiresAt.getTime() - Date.now() < REFRESH_MARGIN_MS;
}

/** The auth provider version an OAuth2 connector version pinned (the latest when the pin is unknown). */
export async function pinnedProvider(
  db: Db,
  namespace: string,
  connector: StoredVersion<Connector>,
): Promise<StoredVersion<AuthProvider> | undefined> {
  const name = connector.resource.provider;
  if (name === undefined) return undefined;
  const pin = connector.pins.find((p) => p.kind === 'auth-provider' && p.name === name);
  if (pin === undefined) return undefined;
  return getAnyVersion<AuthProvider>(db, namespace, 'auth-provider', name, pin.version);
}

/**
 * The credential of a call of `connector` for `endUser`: `{ bearer }` with a usable access token (refreshed first
 * when it expired), or `{ authorization }` with why the person must connect (`need` is told the details); undefined
 * without an end user (the gateway answers `api:connections:end-user-missing`).
 */
export async function connectionCredential(
  deps: ConnectionTokenDeps,
  namespace: string,
  endUser: string | null,
  connector: StoredVersion<Connector>,
  need?: (need: AuthorizationNeed) => void,
  /** The access token the upstream just answered 401 to: refreshed (once) unless another call did already. */
  rejected?: string,
): Promise<CallCredential | undefined> {
  const isStale = (c: ConnectionForCall) => stale(c) || (rejected !== undefined && c.tokens.accessToken === rejected);
  if (connector.resource.grant === 'client_credentials') {
    try {
      return await clientCredential(deps, namespace, connector, isStale, rejected);
    } catch (error) {
      if (isMtError(error) && error.code.startsWith('api:connections:')) return { failed: error };
      throw error;
    }
  }
  if (endUser === null) return undefined;
  const providerName = connector.resource.provider ?? '';
  // The provider's version is read only when it is needed (a refresh, a wait): a call with a live token reads
  // nothing but its connection.
  let providerRead: Promise<StoredVersion<AuthProvider> | undefined> | undefined;
  const providerOf = () => {
    providerRead ??= pinnedProvider(deps.db, namespace, connector);
    return providerRead;
  };
  const wanted = connector.resource.scopes ?? [];
  const refuse = async (reason: string): Promise<CallCredential> => {
    const provider = await providerOf();
    need?.({
      provider: providerName,
      providerVersion: provider?.version ?? 0,
      endUser,
      reason,
      scopes: [...new Set([...(provider?.resource.scopes ?? []), ...wanted])],
    });
    return { authorization: { provider: providerName, endUser, reason } };
  };
  let connection = await findConnectionForCall(deps.db, deps.secretKey, namespace, providerName, endUser);
  if (connection === undefined) return refuse('not connected');
  if (connection.status !== 'Active') return refuse('re-authorisation needed');
  const lacking = wanted.filter((scope) => !connection!.scopes.includes(scope));
  if (lacking.length > 0) return refuse(`missing scopes: ${lacking.join(', ')}`);
  if (isStale(connection)) {
    const oauth = deps.oauth;
    const provider = await providerOf();
    if (
      provider === undefined ||
      oauth === undefined ||
      !provider.resource.refresh ||
      !connection.tokens.refreshToken
    ) {
      return refuse('access token expired');
    }
    const resource = provider.resource;
    const refresh = async (current: ConnectionForCall): Promise<RefreshOutcome> => {
      const client = await providerClient(deps, oauth(), namespace, resource);
      try {
        const granted = await oauth().refresh(
          client.provider,
          client.secret,
          current.tokens.refreshToken ?? '',
          current.scopes,
        );
        return {
          tokens: {
            accessToken: granted.accessToken,
            ...(granted.refreshToken === undefined ? {} : { refreshToken: granted.refreshToken }),
            tokenType: granted.tokenType,
          },
          scopes: granted.scopes,
          expiresAt: granted.expiresAt,
        };
      } catch (error) {
        if (isMtError(error) && error.code === 'api:connections:refresh-refused') return { refused: true };
        throw error;
      }
    };
    try {
      const identity = { provider: providerName, endUser };
      const id = connection.id;
      connection = await refreshShared(deps, namespace, id, identity, isStale, refresh);
      // A shared refresh that found the token this call's upstream just refused still valid: this call's own.
      if (rejected !== undefined && connection?.tokens.accessToken === rejected) {
        connection = await refreshShared(deps, namespace, id, identity, isStale, refresh, false);
      }
    } catch (error) {
      // The provider could not be reached or answered wrongly: this call fails with it (nothing sent, no wait).
      if (isMtError(error) && error.code.startsWith('api:connections:')) return { failed: error };
      throw error;
    }
    if (connection === undefined) return refuse('not connected');
    if (connection.status !== 'Active') return refuse('the provider refused the refresh token');
  }
  return { bearer: connection.tokens.accessToken };
}

/** The end user of a client credentials connection: none (the provider's own token for this client). */
export const CLIENT_END_USER = '';

/**
 * A client credentials connector's credential: the provider's token for this client, kept as the connection with
 * no end user (sealed like every connection) and asked for under the connection's row lock: the first one (the
 * connection made first with an expired token, store reserveConnection) and each after its expiry, one grant a
 * time across every process.
 */
async function clientCredential(
  deps: ConnectionTokenDeps,
  namespace: string,
  connector: StoredVersion<Connector>,
  isStale: (connection: ConnectionForCall) => boolean,
  rejected?: string,
): Promise<CallCredential> {
  const providerName = connector.resource.provider ?? '';
  const provider = await pinnedProvider(deps.db, namespace, connector);
  const oauth = deps.oauth;
  if (provider === undefined || oauth === undefined) {
    return { authorization: { provider: providerName, endUser: CLIENT_END_USER, reason: 'no OAuth client' } };
  }
  const resource = provider.resource;
  const scopes = [...new Set([...resource.scopes, ...(connector.resource.scopes ?? [])])];
  const grant = async (): Promise<{ tokens: ConnectionTokens; scopes: string[]; expiresAt: Date | null }> => {
    const client = await providerClient(deps, oauth(), namespace, resource);
    const granted = await oauth().clientCredentials(client.provider, client.secret, scopes);
    return {
      tokens: { accessToken: granted.accessToken, tokenType: granted.tokenType },
      scopes: granted.scopes,
      expiresAt: granted.expiresAt,
    };
  };
  // The first token too is asked for under the connection's row (made first, its token expired), so that calls at
  // once in every process make one grant.
  let connection: ConnectionForCall | undefined =
    (await findConnectionForCall(deps.db, deps.secretKey, namespace, providerName, CLIENT_END_USER)) ??
    (await reserveConnection(deps.db, deps.secretKey, namespace, { provider: providerName, endUser: CLIENT_END_USER }));
  if (isStale(connection)) {
    // A client's token is asked for (never refreshed), once a connection at a time as a refresh is.
    const identity = { provider: providerName, endUser: CLIENT_END_USER };
    const id = connection.id;
    connection = await refreshShared(deps, namespace, id, identity, isStale, grant);
    if (rejected !== undefined && connection?.tokens.accessToken === rejected) {
      connection = await refreshShared(deps, namespace, id, identity, isStale, grant, false);
    }
    if (connection === undefined) return clientCredential(deps, namespace, connector, isStale, rejected);
  }
  return { bearer: connection.tokens.accessToken };
}
