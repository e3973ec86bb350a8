import { randomUUID } from 'node:crypto';
import type { Db, Queryable } from '../db/db.js';
import { openSecret, sealSecret } from '../secrets/envelope.js';
import { type SecretKeys, toKeyring } from '../secrets/keyring.js';
import { type EnvelopeRow, envelopeOf } from '../secrets/secrets.js';

// An OAuth 2 client registered dynamically (RFC 7591) at an authorization server, once per (namespace, issuer,
// redirect URI): its secret sealed like a connection's tokens, the AAD bound to `oauth-client:<id>`.
// key-rotation.ts re-wraps it.
const clientAad = (id: string) => `oauth-client:${id}`;

/** Where a registered client belongs: its namespace, the authorization server's issuer and the redirect URI. */
export interface OAuthClientKey {
  namespace: string;
  issuer: string;
  redirectUri: string;
}

/** A registered client as the OAuth client uses it. Its secret is never returned by the API, never logged. */
export interface RegisteredOAuthClient {
  clientId: string;
  clientSecret?: string;
  registrationAccessToken?: string;
  /** The client configuration endpoint (RFC 7592) the server answered, where it offers client management. */
  registrationClientUri?: string;
  tokenAuthMethod: string;
}

/** A stored registered client: its row's id besides. */
export interface StoredOAuthClient extends RegisteredOAuthClient {
  id: string;
}

interface Row extends EnvelopeRow {
  id: string;
  namespace: string;
  client_id: string;
  token_auth_method: string;
  registration_client_uri: string | null;
}

function clientOf(keys: SecretKeys, row: Row): StoredOAuthClient {
  const sealed = JSON.parse(openSecret(keys, row.namespace, clientAad(row.id), envelopeOf(row))) as {
    clientSecret?: string;
    registrationAccessToken?: string;
  };
  return {
    id: row.id,
    clientId: row.client_id,
    tokenAuthMethod: row.token_auth_method,
    ...(row.registration_client_uri === null ? {} : { registrationClientUri: row.registration_client_uri }),
    ...(sealed.clientSecret === undefined ? {} : { clientSecret: sealed.clientSecret }),
    ...(sealed.registrationAccessToken === undefined
      ? {}
      : { registrationAccessToken: sealed.registrationAccessToken }),
  };
}

/** The client registered for `key`, or undefined when none is yet. */
export async function findOAuthClient(
  db: Queryable,
  keys: SecretKeys,
  key: OAuthClientKey,
): Promise<StoredOAuthClient | undefined> {
  const { rows } = await db.query<Row>(
    'SELECT id, namespace, client_id, token_auth_method, registration_client_uri, iv, ciphertext, tag, key_id, ' +
      'wrapped_key ' +
      'FROM mt_oauth_clients WHERE namespace = $1 AND issuer = $2 AND redirect_uri = $3',
    [key.namespace, key.issuer, key.redirectUri],
  );
  return rows[0] === undefined ? undefined : clientOf(keys, rows[0]);
}

/**
 * Registers the client for `key` once across every process: `register` is called under a transaction-scoped advisory
 * lock on the key, after looking again, so two processes asking at once make one registration at the server; the
 * row is inserted with ON CONFLICT DO NOTHING besides. Returns the client stored for the key.
 */
export async function registerOAuthClientOnce(
  db: Db,
  keys: SecretKeys,
  key: OAuthClientKey,
  register: () => Promise<RegisteredOAuthClient>,
): Promise<RegisteredOAuthClient> {
  const known = await findOAuthClient(db, keys, key);
  if (known !== undefined) return known;
  const run = async (tx: Queryable): Promise<RegisteredOAuthClient> => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
      `mt_oauth_clients ${key.namespace} ${key.issuer} ${key.redirectUri}`,
    ]);
    const found = await findOAuthClient(tx, keys, key);
    if (found !== undefined) return found;
    const client = await register();
    const id = randomUUID();
    const secret = JSON.stringify({
      ...(client.clientSecret === undefined ? {} : { clientSecret: client.clientSecret }),
      ...(client.registrationAccessToken === undefined
        ? {}
        : { registrationAccessToken: client.registrationAccessToken }),
    });
    const sealed = sealSecret(toKeyring(keys).current, key.namespace, clientAad(id), secret);
    await tx.query(
      'INSERT INTO mt_oauth_clients (id, namespace, issuer, redirect_uri, client_id, token_auth_method, iv, ' +
        'ciphertext, tag, key_id, wrapped_key, registration_client_uri) ' +
        'VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ' +
        'ON CONFLICT (namespace, issuer, redirect_uri) DO NOTHING',
      [
        id,
        key.namespace,
        key.issuer,
        key.redirectUri,
        client.clientId,
        client.tokenAuthMethod,
        sealed.iv,
        sealed.ciphertext,
        sealed.tag,
        sealed.keyId,
        sealed.wrappedKey,
        client.registrationClientUri ?? null,
      ],
    );
    return (await findOAuthClient(tx, keys, key)) ?? client;
  };
  return db.transaction(run);
}

/** Deletes the stored registered client `id` (the server deleted it: RFC 7592). True when a row was deleted. */
export async function deleteOAuthClient(db: Queryable, namespace: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM mt_oauth_clients WHERE namespace = $1 AND id = $2', [namespace, id]);
  return (rowCount ?? 0) > 0;
}
