import { type AuthorizationNeed, connectionCredential, providerClient } from '@maitento/engine';
import type { MtError } from '@maitento/errors';
import { type CallCredential, gatewayErrors } from '@maitento/gateway';
import type { AuthProvider } from '@maitento/lang';
import {
  type AuditContext,
  CONNECT_LINK_TTL_MS,
  createConnectLink,
  getAnyVersion,
  readSecretValue,
  recordAudit,
} from '@maitento/store';
import { redirectUriOf } from '../routes/connections.js';
import type { ServerContext } from '../server/context.js';
import type { DirectTool } from './traced-call.js';

// The connection of a tool called directly (`POST /v1/extops/{name}/call`, MCP `tools/call`) for the end user the
// request names: an OAuth2 connector's credential, or, when that person has no usable connection at its provider,
// `api:connections:authorization-required` with a fresh connect link for them (no run exists to wait; the caller
// hands the URL to the person and calls again). Decisions 0315 (MCP) and 0335 (REST).

/** The connect link a refused call carries: the person opens `url`, then the caller calls again. */
export interface CallAuthorization {
  provider: string;
  endUser: string;
  reason: string;
  scopes: string[];
  url: string;
  expiresAt: string;
}

/** The credential to call with, or the refusal (with a link when one could be made). */
export type ConnectionForCall =
  | { credential: CallCredential | undefined }
  | { refused: MtError; authorization?: CallAuthorization; linkId?: string };

/** What reading a connection's token needs, for `namespace`. */
export function tokenDeps(ctx: ServerContext, namespace: string) {
  return {
    db: ctx.db,
    secretKey: ctx.secretKey,
    oauth: ctx.oauth,
    readSecret: async (name: string) => (await readSecretValue(ctx.db, ctx.secretKey, namespace, { name }))?.value,
  };
}

/** An OAuth2 connector's credential for `endUser` (null: none named; a client credentials connector needs none). */
export function directCredential(
  ctx: ServerContext,
  namespace: string,
  loaded: DirectTool,
  endUser: string | null,
  need?: (need: AuthorizationNeed) => void,
): Promise<CallCredential | undefined> {
  return connectionCredential(tokenDeps(ctx, namespace), namespace, endUser, loaded.connector, need);
}

/**
 * Reads the connection a direct call of an OAuth2 connector uses (once: the credential found is the call's). When
 * the end user must connect (again), makes their connect link as `POST /v1/connections/links` does, audited as
 * `connection.link-created` by `audit`'s actor with the tool named, and answers the refusal carrying it.
 */
export async function connectionForCall(
  ctx: ServerContext,
  namespace: string,
  loaded: DirectTool,
  endUser: string | null,
  link: { createdBy: string; audit: AuditContext },
): Promise<ConnectionForCall> {
  let need: AuthorizationNeed | undefined;
  const credential = await directCredential(ctx, namespace, loaded, endUser, (n) => {
    need = n;
  });
  if (need === undefined) return { credential };
  const wanted: AuthorizationNeed = need;
  const tool = loaded.tool.resource.name;
  const params = { tool, endUser: wanted.endUser, provider: wanted.provider, reason: wanted.reason };
  const refused = gatewayErrors.create('api:connections:authorization-required', params);
  const redirectUri = redirectUriOf(ctx);
  if (redirectUri === undefined) return { refused };
  const stored = await getAnyVersion<AuthProvider>(
    ctx.db,
    namespace,
    'auth-provider',
    wanted.provider,
    wanted.providerVersion,
  );
  if (stored === undefined) return { refused };
  const { provider } = await providerClient(
    tokenDeps(ctx, namespace),
    ctx.oauth(),
    namespace,
    stored.resource,
    redirectUri,
  );
  const start = await ctx.oauth().startAuthorization(provider, redirectUri, wanted.scopes);
  const expiresAt = new Date(Date.now() + CONNECT_LINK_TTL_MS);
  const linkId = await ctx.db.transaction(async (tx) => {
    const made = await createConnectLink(tx, ctx.secretKey, namespace, {
      provider: wanted.provider,
      providerVersion: stored.version,
      endUser: wanted.endUser,
      scopes: wanted.scopes,
      redirectUri,
      state: start.state,
      codeVerifier: start.codeVerifier,
      ...(start.nonce === undefined ? {} : { nonce: start.nonce }),
      createdBy: link.createdBy,
      expiresAt,
    });
    await recordAudit(tx, {
      ...link.audit,
      namespace,
      action: 'connection.link-created',
      target: { kind: 'connection-link', id: made.id },
      after: {
        provider: wanted.provider,
        version: stored.version,
        endUser: wanted.endUser,
        scopes: wanted.scopes,
        tool,
      },
    });
    return made.id;
  });
  const authorization: CallAuthorization = {
    provider: wanted.provider,
    endUser: wanted.endUser,
    reason: wanted.reason,
    scopes: wanted.scopes,
    url: start.url,
    expiresAt: expiresAt.toISOString(),
  };
  // The link rides on the error (a REST error body's `authorization`, see the error handler).
  return {
    refused: gatewayErrors.create('api:connections:authorization-required', params, { details: { authorization } }),
    authorization,
    linkId,
  };
}
