import type { AuthProvider } from '@maitento/lang';
import {
  type AuditContext,
  DELETED_HASH,
  deleteOAuthClient,
  findOAuthClient,
  getAnyVersion,
  listResources,
  recordAudit,
} from '@maitento/store';
import { redirectUriOf } from '../routes/connections.js';
import type { ServerContext } from '../server/context.js';

// RFC 7592 client management (decision 0336): a client Maitento registered dynamically (decision 0315) belongs to the
// (namespace, issuer, redirect URI), shared by every auth provider of that issuer that names no client id. Once the
// last such provider is deleted (`DELETE /v1/auth-providers/{name}`, or `mt deploy --prune`), the client is deleted
// at the server with its registration access token, and then its row, with the connections made through it (their
// tokens were issued to that client). Nothing here fails the deletion: a server that cannot be reached, or one that
// offers no client management, leaves the client as it is (logged, never a token).

type Log = { info: (obj: object, msg: string) => void; warn: (obj: object, msg: string) => void };

/** The last version of `name` before its deletion marker: the provider as it was. */
async function lastProvider(ctx: ServerContext, namespace: string, name: string): Promise<AuthProvider | undefined> {
  const { rows } = await ctx.db.query<{ version: number }>(
    'SELECT version FROM mt_resource_versions WHERE namespace = $1 AND kind = $2 AND name = $3 AND hash <> $4 ' +
      'ORDER BY version DESC LIMIT 1',
    [namespace, 'auth-provider', name, DELETED_HASH],
  );
  if (rows[0] === undefined) return undefined;
  return (await getAnyVersion<AuthProvider>(ctx.db, namespace, 'auth-provider', name, rows[0].version))?.resource;
}

/** The issuer a provider that names no client id registers at; undefined for one that names its client. */
async function registeringIssuer(ctx: ServerContext, provider: AuthProvider): Promise<string | undefined> {
  if (provider.clientId !== undefined) return undefined;
  return ctx.oauth().issuer(provider);
}

/** The deleted auth providers of `namespace` (a marker is their latest row) that registered at `issuer`. */
async function deletedProvidersOf(ctx: ServerContext, namespace: string, issuer: string): Promise<string[]> {
  const { rows } = await ctx.db.query<{ name: string }>(
    'SELECT name FROM (SELECT DISTINCT ON (name) name, hash FROM mt_resource_versions WHERE namespace = $1 AND ' +
      'kind = $2 ORDER BY name, version DESC) latest WHERE hash = $3',
    [namespace, 'auth-provider', DELETED_HASH],
  );
  const names: string[] = [];
  for (const { name } of rows) {
    const provider = await lastProvider(ctx, namespace, name);
    if (provider !== undefined && (await registeringIssuer(ctx, provider).catch(() => undefined)) === issuer) {
      names.push(name);
    }
  }
  return names;
}

/**
 * After the auth providers `names` of `namespace` were deleted (by `audit`'s actor): deletes, at its server and then
 * here, each registered client no provider left in the namespace uses, and the connections of the deleted providers
 * of its issuer (each audited `connection.deleted`). Resolves the ids of the clients deleted.
 */
export async function forgetRegisteredClients(
  ctx: ServerContext,
  namespace: string,
  names: string[],
  log: Log,
  audit: AuditContext,
): Promise<string[]> {
  const redirectUri = redirectUriOf(ctx);
  if (redirectUri === undefined || names.length === 0) return [];
  const deleted: string[] = [];
  for (const name of names) {
    try {
      const provider = await lastProvider(ctx, namespace, name);
      if (provider === undefined) continue;
      const issuer = await registeringIssuer(ctx, provider);
      if (issuer === undefined) continue;
      const client = await findOAuthClient(ctx.db, ctx.secretKey, { namespace, issuer, redirectUri });
      if (client === undefined) continue;
      // Another provider of the namespace registering at the same issuer keeps the client.
      let shared = false;
      for (const other of await listResources(ctx.db, namespace, 'auth-provider')) {
        const stored = await getAnyVersion<AuthProvider>(ctx.db, namespace, 'auth-provider', other.name);
        if (stored === undefined) continue;
        if ((await registeringIssuer(ctx, stored.resource)) === issuer) {
          shared = true;
          break;
        }
      }
      if (shared) continue;
      if (client.registrationClientUri === undefined || client.registrationAccessToken === undefined) {
        log.info({ provider: name, issuer }, 'the registered client stays: its server offers no client management');
        continue;
      }
      await ctx.oauth().deleteRegistration(provider, client.registrationClientUri, client.registrationAccessToken);
      const providers = await deletedProvidersOf(ctx, namespace, issuer);
      await ctx.db.transaction(async (tx) => {
        await deleteOAuthClient(tx, namespace, client.id);
        const { rows: gone } = await tx.query<{ id: string; provider: string; end_user: string }>(
          'DELETE FROM mt_connections WHERE namespace = $1 AND provider = ANY($2::text[]) RETURNING id, provider, end_user',
          [namespace, providers],
        );
        for (const connection of gone) {
          await recordAudit(tx, {
            ...audit,
            namespace,
            action: 'connection.deleted',
            target: { kind: 'connection', id: connection.id },
            before: { provider: connection.provider, endUser: connection.end_user, reason: 'its client was deleted' },
          });
        }
      });
      log.info({ provider: name, issuer, clientId: client.clientId }, 'deleted the registered client at its server');
      deleted.push(client.clientId);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      log.warn({ provider: name, reason }, 'deleting the registered client of a deleted auth provider failed');
    }
  }
  return deleted;
}
