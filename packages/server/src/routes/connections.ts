import { type GatewayErrorCode, gatewayErrors, type OAuthClient } from '@maitento/gateway';
import { providerClient } from '@maitento/engine';
import type { AuthProvider } from '@maitento/lang';
import {
  type Connection,
  type ConnectLink,
  CreateConnectLinkBodySchema,
  IdParamsSchema,
  ListConnectionsQuerySchema,
} from '@maitento/sdk';
import {
  type AuditContext,
  CONNECT_LINK_TTL_MS,
  createConnectLink,
  deleteConnection,
  getConnection,
  getVersion,
  listConnections,
  notifyWake,
  type Queryable,
  readConnectionTokens,
  readSecretValue,
  recordAudit,
  saveConnection,
  secretNames,
  storeErrors,
  useConnectLink,
  wakeTopics,
} from '@maitento/store';
import { Type } from 'typebox';
import { serverErrors } from '../errors.js';
import { auditContext } from '../http/actor.js';
import { operation } from '../openapi/operation.js';
import { bindAnswer, sendBound } from '../plugins/idempotency.js';
import type { Api } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';

/** What the callback answers the person when the link has no returnUrl. */
const CONNECTED_PAGE =
  '<!doctype html><meta charset="utf-8"><title>Connected</title><p>Your account is connected. You can close this window.</p>';

/** The path of the callback every auth provider redirects to (MT_PUBLIC_URL + this). */
export const CALLBACK_PATH = '/v1/connections/callback';

/** The redirect URI of this server, or undefined without MT_PUBLIC_URL. */
export function redirectUriOf(ctx: ServerContext): string | undefined {
  return ctx.platformOrigin === undefined ? undefined : new URL(CALLBACK_PATH, ctx.platformOrigin).href;
}

const PROVIDER_ERRORS: GatewayErrorCode[] = ['api:connections:provider-failed'];

/** `/v1/connections`: connect links for end users, and their connections (never a token). */
export async function connectionRoutes(app: Api, ctx: ServerContext): Promise<void> {
  app.post(
    '/connections/links',
    {
      config: { role: 'run' },
      schema: operation({
        operationId: 'createConnectLink',
        tags: ['connections'],
        summary: 'Make a connect link for an end user',
        description:
          "Starts an authorisation of the end user at the auth provider (the provider's latest version): answers the " +
          "provider's authorization URL (PKCE S256, a fresh state) to hand the person. Opened once, within 10 minutes, " +
          'it comes back to this server (MT_PUBLIC_URL + /v1/connections/callback), which stores the connection.',
        body: CreateConnectLinkBodySchema,
        response: { 201: { $ref: 'ConnectLink#' } },
        ok: 'The link: the URL to hand the end user, and when it expires',
        errors: [
          'api:auth-providers:not-found',
          'api:auth-providers:version-disabled',
          'api:connections:no-public-url',
          'api:connections:return-url-invalid',
          'api:connections:client-secret-missing',
          ...PROVIDER_ERRORS,
        ],
        examples: {
          body: { provider: 'github', endUser: 'user-42', returnUrl: 'https://app.example.com/settings' },
        },
      }),
    },
    async (request, reply) => {
      const { namespace } = request.identity;
      const redirectUri = redirectUriOf(ctx);
      if (redirectUri === undefined) throw serverErrors.create('api:connections:no-public-url');
      const { provider: name, endUser, returnUrl } = request.body;
      if (returnUrl !== undefined && !isHttpUrl(returnUrl)) {
        throw serverErrors.create('api:connections:return-url-invalid', { url: returnUrl });
      }
      const stored = await getVersion(ctx.db, namespace, 'auth-provider', name);
      if (!stored.enabled) {
        throw serverErrors.create('api:auth-providers:version-disabled', { name, version: stored.version });
      }
      const written = stored.resource as AuthProvider;
      // The client secret is needed at the callback: a link that could not finish is refused now.
      if (
        written.clientSecret !== undefined &&
        !(await secretNames(ctx.db, namespace)).includes(written.clientSecret)
      ) {
        throw gatewayErrors.create('api:connections:client-secret-missing', {
          provider: name,
          secret: written.clientSecret,
        });
      }
      // A provider with no client id has its client registered (once) before its first link.
      const { provider } = await providerClient(clientDeps(ctx, namespace), ctx.oauth(), namespace, written);
      const scopes = [...new Set([...provider.scopes, ...(request.body.scopes ?? [])])];
      const start = await ctx.oauth().startAuthorization(provider, redirectUri, scopes);
      const expiresAt = new Date(Date.now() + CONNECT_LINK_TTL_MS);
      // The answer commits with the request's Idempotency-Key (decision 0102) and the audit row.
      const body = await ctx.db.transaction(async (tx) => {
        const made = await createConnectLink(tx, ctx.secretKey, namespace, {
          provider: name,
          providerVersion: stored.version,
          endUser,
          scopes,
          redirectUri,
          ...(returnUrl === undefined ? {} : { returnUrl }),
          state: start.state,
          codeVerifier: start.codeVerifier,
          ...(start.nonce === undefined ? {} : { nonce: start.nonce }),
          createdBy: request.identity.keyId,
          expiresAt,
        });
        await recordAudit(tx, {
          ...auditContext(request),
          namespace,
          action: 'connection.link-created',
          target: { kind: 'connection-link', id: made.id },
          after: { provider: name, version: stored.version, endUser, scopes },
        });
        const answer: ConnectLink = {
          id: made.id,
          url: start.url,
          provider: name,
          endUser,
          scopes,
          expiresAt: expiresAt.toISOString(),
        };
        return bindAnswer(tx, reply, 201, answer);
      });
      return sendBound(reply, body);
    },
  );

  app.get(
    '/connections',
    {
      schema: operation({
        operationId: 'listConnections',
        tags: ['connections'],
        summary: 'List connections',
        description:
          'Lists the connections of the namespace by provider and end user: their status and scopes, never a token.',
        querystring: ListConnectionsQuerySchema,
        response: { 200: { type: 'array', items: { $ref: 'Connection#' } } },
        ok: 'The connections (an empty list when none matches)',
        errors: [],
      }),
    },
    async (request) => listConnections(ctx.db, request.identity.namespace, request.query),
  );

  app.get(
    '/connections/:id',
    {
      schema: operation({
        operationId: 'getConnection',
        tags: ['connections'],
        summary: 'One connection',
        description: 'Reads one connection: its provider, end user, status, scopes and times, never a token.',
        params: IdParamsSchema,
        response: { 200: { $ref: 'Connection#' } },
        ok: 'The connection',
        errors: ['api:connections:not-found'],
      }),
    },
    async (request) => getConnection(ctx.db, request.identity.namespace, request.params.id),
  );

  app.delete(
    '/connections/:id',
    {
      config: { role: 'run' },
      schema: operation({
        operationId: 'deleteConnection',
        tags: ['connections'],
        summary: 'Delete a connection',
        description:
          'Deletes a connection and its tokens: calls for that end user need a new connect link. Its refresh token ' +
          "(else its access token) is first revoked at the provider (RFC 7009) when the provider's metadata names a " +
          'revocation endpoint; a revocation that fails is logged and the connection deleted anyway.',
        params: IdParamsSchema,
        response: { 200: { $ref: 'Connection#' } },
        ok: 'The connection deleted',
        errors: ['api:connections:not-found'],
      }),
    },
    async (request, reply) => {
      const { namespace } = request.identity;
      const body = await removeConnection(
        ctx,
        namespace,
        request.params.id,
        auditContext(request),
        request.log,
        (tx, gone) => bindAnswer(tx, reply, 200, gone),
      );
      return sendBound(reply, body);
    },
  );
}

/**
 * `GET /v1/connections/callback`: where an auth provider sends the end user back. No API key: the state names the
 * link (once, before it expires); the PKCE verifier, the issuer (RFC 9207) and the redirect URI are checked, and only
 * then are the tokens stored. Registered outside the API key check.
 */
export async function connectionCallbackRoutes(app: Api, ctx: ServerContext): Promise<void> {
  app.get(
    '/connections/callback',
    {
      schema: operation({
        operationId: 'connectionCallback',
        tags: ['connections'],
        summary: "The auth providers' redirect URI (no API key)",
        description:
          'Where an auth provider sends the end user back after a connect link. It uses the link of `state` once ' +
          '(before it expires), checks the response (its `iss` per RFC 9207, an error the provider sent), exchanges ' +
          'the code with the PKCE verifier at the redirect URI the link was made with, and stores the connection. ' +
          "It answers a short page, or redirects to the link's returnUrl with `connection` (its id) added.",
        security: [],
        querystring: Type.Object(
          { state: Type.Optional(Type.String({ maxLength: 2000 })) },
          { additionalProperties: true },
        ),
        response: {
          200: { type: 'string', description: 'A short HTML page: the account is connected' },
          303: { type: 'string', description: "To the link's returnUrl, with connection=<id> added" },
        },
        produces: ['text/html'],
        ok: 'The page saying the account is connected (or a 303 to the returnUrl)',
        examples: {
          oks: { 'text/html': CONNECTED_PAGE },
          statuses: {
            '303': { description: "To the link's returnUrl, with connection=<id> added", example: '' },
          },
        },
        errors: [
          'api:connections:link-unknown',
          'api:connections:link-used',
          'api:connections:link-expired',
          'api:connections:redirect-mismatch',
          'api:connections:issuer-mismatch',
          'api:connections:authorization-refused',
          'api:connections:callback-invalid',
          'api:connections:client-secret-missing',
          ...PROVIDER_ERRORS,
        ],
      }),
    },
    async (request, reply) => {
      const state = request.query.state;
      if (state === undefined || state === '') throw storeErrors.create('api:connections:link-unknown');
      const link = await useConnectLink(ctx.db, ctx.secretKey, state);
      const redirectUri = redirectUriOf(ctx);
      if (redirectUri !== link.redirectUri) {
        throw serverErrors.create('api:connections:redirect-mismatch', { expected: link.redirectUri });
      }
      const stored = await getVersion(ctx.db, link.namespace, 'auth-provider', link.provider, link.providerVersion);
      const { provider, secret: clientSecret } = await providerClient(
        clientDeps(ctx, link.namespace),
        ctx.oauth(),
        link.namespace,
        stored.resource as AuthProvider,
      );
      const callback = new URL(link.redirectUri);
      const query = request.raw.url?.split('?')[1] ?? '';
      callback.search = query;
      const tokens = await ctx.oauth().finishAuthorization(provider, clientSecret, callback, { ...link, state });
      const connection: Connection = await ctx.db.transaction(async (tx) => {
        const saved = await saveConnection(tx, ctx.secretKey, link.namespace, {
          provider: link.provider,
          endUser: link.endUser,
          scopes: tokens.scopes,
          tokens: {
            accessToken: tokens.accessToken,
            ...(tokens.refreshToken === undefined ? {} : { refreshToken: tokens.refreshToken }),
            tokenType: tokens.tokenType,
          },
          expiresAt: tokens.expiresAt,
        });
        await recordAudit(tx, {
          actor: { kind: 'system', via: 'connect-callback' },
          requestId: request.id,
          namespace: link.namespace,
          action: 'connection.connected',
          target: { kind: 'connection', id: saved.id },
          after: { provider: saved.provider, endUser: saved.endUser, scopes: saved.scopes, link: link.id },
        });
        // An MCP call waiting on this person's URL elicitation (any process) goes on: at commit.
        await notifyWake(tx, wakeTopics.connection(link.namespace, link.provider, link.endUser));
        return saved;
      });
      // The runs that waited for this person to connect go on (their jobs are queued).
      await ctx.engine.connectionMade(link.namespace, link.provider, link.endUser, connection.id);
      if (link.returnUrl !== null) {
        const back = new URL(link.returnUrl);
        back.searchParams.set('connection', connection.id);
        return reply.code(303).header('location', back.href).send('');
      }
      return reply.type('text/html; charset=utf-8').send(CONNECTED_PAGE);
    },
  );
}

/**
 * Deletes a connection of `namespace` as `DELETE /v1/connections/{id}` and the console do: its token revoked at the
 * provider first (when it can be), then the row and its audit row in one transaction, with `answer` (the REST
 * route's idempotent answer) in it too.
 */
export async function removeConnection<T = Connection>(
  ctx: ServerContext,
  namespace: string,
  id: string,
  audit: AuditContext,
  log: { warn: (obj: object, msg: string) => void },
  answer: (tx: Queryable, gone: Connection) => Promise<T> = async (_tx, gone) => gone as T,
): Promise<T> {
  await revokeAtProvider(ctx, namespace, id, log);
  return ctx.db.transaction(async (tx) => {
    const gone = await deleteConnection(tx, namespace, id);
    await recordAudit(tx, {
      ...audit,
      namespace,
      action: 'connection.deleted',
      target: { kind: 'connection', id: gone.id },
      before: { provider: gone.provider, endUser: gone.endUser },
    });
    return answer(tx, gone);
  });
}

/**
 * Revokes a connection's refresh token (else its access token) at its provider's latest version (RFC 7009), when
 * the provider names a revocation endpoint. Never throws for the provider's failure: it is logged (never a token),
 * and the connection is deleted anyway; the person can still revoke the grant at the provider.
 */
async function revokeAtProvider(
  ctx: ServerContext,
  namespace: string,
  id: string,
  log: { warn: (obj: object, msg: string) => void },
): Promise<void> {
  const connection = await getConnection(ctx.db, namespace, id);
  const tokens = await readConnectionTokens(ctx.db, ctx.secretKey, namespace, id);
  // A client credentials connection whose first token was never granted (store reserveConnection) holds none.
  const token = tokens?.refreshToken ?? tokens?.accessToken;
  if (!token) return;
  try {
    const stored = await getVersion(ctx.db, namespace, 'auth-provider', connection.provider);
    const { provider, secret: clientSecret } = await providerClient(
      clientDeps(ctx, namespace),
      ctx.oauth(),
      namespace,
      stored.resource as AuthProvider,
    );
    await ctx.oauth().revoke(provider, clientSecret, token);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    log.warn({ connection: id, provider: connection.provider, reason }, 'revoking a connection at its provider failed');
  }
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/** The OAuth client of a server, made on first use (most servers never connect an account). */
/** What finding a provider's client needs: the store, and its secrets read in `namespace`. */
function clientDeps(ctx: ServerContext, namespace: string) {
  return {
    db: ctx.db,
    secretKey: ctx.secretKey,
    readSecret: async (name: string) => (await readSecretValue(ctx.db, ctx.secretKey, namespace, { name }))?.value,
  };
}

export function lazyOAuthClient(make: () => OAuthClient): { get: () => OAuthClient; close: () => Promise<void> } {
  let client: OAuthClient | undefined;
  return {
    get: () => {
      client ??= make();
      return client;
    },
    close: async () => {
      await client?.close();
    },
  };
}
