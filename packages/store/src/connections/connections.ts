import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Connection } from '@maitento/sdk/wire';
import type { Db, Queryable } from '../db/db.js';
import { storeErrors } from '../errors.js';
import { iso } from '../internal/rows.js';
import { isUuid } from '../internal/uuid.js';
import { openSecret, sealSecret } from '../secrets/envelope.js';
import { outboxCte, outboxWoken } from '../webhooks/webhooks.js';
import { type SecretKeys, toKeyring } from '../secrets/keyring.js';
import { REFRESH_POLL_MS, REFRESH_WAIT_MS } from '../timers.js';
import { type EnvelopeRow, envelopeOf } from '../secrets/secrets.js';

// A connection's tokens and a link's PKCE verifier are sealed like secrets (envelope.ts), their AAD bound to these
// prefixed ids: a sealed value moved between tables, or to a secret's row, does not open. key-rotation.ts re-wraps them.
const connectionAad = (id: string) => `connection:${id}`;
const linkAad = (id: string) => `connect-link:${id}`;

/** How long a connect link may wait for its callback. */
export const CONNECT_LINK_TTL_MS = 10 * 60_000;

/** A connection's tokens, as sealed: never returned by the API, never logged. */
export interface ConnectionTokens {
  accessToken: string;
  refreshToken?: string;
  tokenType: string;
}

interface ConnectionRow {
  id: string;
  provider: string;
  end_user: string;
  status: Connection['status'];
  scopes: string[];
  has_refresh_token: boolean;
  access_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const CONNECTION_COLUMNS =
  'id, provider, end_user, status, scopes, has_refresh_token, access_expires_at, created_at, updated_at';

function connectionOf(row: ConnectionRow): Connection {
  return {
    id: row.id,
    provider: row.provider,
    endUser: row.end_user,
    status: row.status,
    scopes: row.scopes,
    hasRefreshToken: row.has_refresh_token,
    accessTokenExpiresAt: row.access_expires_at === null ? null : iso(row.access_expires_at),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

/** The sha256 of a connect link's state, the only form of it stored. */
export function stateHash(state: string): string {
  return createHash('sha256').update(`maitento:connect-state:${state}`).digest('hex');
}

/** What a connect link keeps until its callback. */
export interface NewConnectLink {
  provider: string;
  providerVersion: number;
  endUser: string;
  scopes: string[];
  redirectUri: string;
  returnUrl?: string;
  state: string;
  codeVerifier: string;
  nonce?: string;
  createdBy: string | null;
  expiresAt: Date;
}

/** Stores a connect link: its state as a hash, its PKCE verifier (and nonce) sealed. */
export async function createConnectLink(
  db: Queryable,
  keys: SecretKeys,
  namespace: string,
  link: NewConnectLink,
): Promise<{ id: string }> {
  const id = randomUUID();
  const secret = JSON.stringify({ codeVerifier: link.codeVerifier, ...(link.nonce ? { nonce: link.nonce } : {}) });
  const sealed = sealSecret(toKeyring(keys).current, namespace, linkAad(id), secret);
  // With the webhooks' `authorization.requested` (docs/notifications.md) in the same statement: never the link's URL,
  // whose state is the end user's to use.
  await db.query(
    'WITH made AS (INSERT INTO mt_connect_links (id, namespace, state_hash, provider, provider_version, end_user, scopes, ' +
      'redirect_uri, return_url, iv, ciphertext, tag, key_id, wrapped_key, created_by, expires_at) ' +
      'VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) ' +
      'RETURNING id, namespace, provider, end_user, scopes, expires_at), ' +
      outboxCte('hooked', 'made', {
        namespace: 'namespace',
        type: "'authorization.requested'",
        data:
          "json_build_object('linkId', id, 'namespace', namespace, 'provider', provider, 'endUser', end_user, " +
          "'scopes', scopes, 'expiresAt', expires_at)",
      }) +
      ` SELECT ${outboxWoken('hooked')} FROM made`,
    [
      id,
      namespace,
      stateHash(link.state),
      link.provider,
      link.providerVersion,
      link.endUser,
      link.scopes,
      link.redirectUri,
      link.returnUrl ?? null,
      sealed.iv,
      sealed.ciphertext,
      sealed.tag,
      sealed.keyId,
      sealed.wrappedKey,
      link.createdBy,
      link.expiresAt,
    ],
  );
  return { id };
}

/** A connect link as its callback uses it, once. */
export interface UsedConnectLink {
  id: string;
  namespace: string;
  provider: string;
  providerVersion: number;
  endUser: string;
  scopes: string[];
  redirectUri: string;
  returnUrl: string | null;
  codeVerifier: string;
  nonce?: string;
}

/**
 * Uses the connect link of `state`, once: marks it used and returns it with its PKCE verifier. A state that names
 * no link is `api:connections:link-unknown`, a used one `api:connections:link-used`, an expired one
 * `api:connections:link-expired`; none of them changes anything.
 */
export async function useConnectLink(db: Queryable, keys: SecretKeys, state: string): Promise<UsedConnectLink> {
  type Row = EnvelopeRow & {
    id: string;
    namespace: string;
    provider: string;
    provider_version: number;
    end_user: string;
    scopes: string[];
    redirect_uri: string;
    return_url: string | null;
  };
  const hash = stateHash(state);
  const { rows } = await db.query<Row>(
    'UPDATE mt_connect_links SET used_at = now() ' +
      'WHERE state_hash = $1 AND used_at IS NULL AND expires_at > now() ' +
      'RETURNING id, namespace, provider, provider_version, end_user, scopes, redirect_uri, return_url, ' +
      'iv, ciphertext, tag, key_id, wrapped_key',
    [hash],
  );
  const row = rows[0];
  if (!row) {
    const { rows: found } = await db.query<{ used: boolean }>(
      'SELECT used_at IS NOT NULL AS used FROM mt_connect_links WHERE state_hash = $1',
      [hash],
    );
    if (found.length === 0) throw storeErrors.create('api:connections:link-unknown');
    throw storeErrors.create(found[0].used ? 'api:connections:link-used' : 'api:connections:link-expired');
  }
  const sealed = JSON.parse(openSecret(keys, row.namespace, linkAad(row.id), envelopeOf(row))) as {
    codeVerifier: string;
    nonce?: string;
  };
  return {
    id: row.id,
    namespace: row.namespace,
    provider: row.provider,
    providerVersion: row.provider_version,
    endUser: row.end_user,
    scopes: row.scopes,
    redirectUri: row.redirect_uri,
    returnUrl: row.return_url,
    codeVerifier: sealed.codeVerifier,
    ...(sealed.nonce === undefined ? {} : { nonce: sealed.nonce }),
  };
}

/**
 * Stores the tokens of an authorisation as the connection of (namespace, provider, end user): a new connection, or
 * the existing one's tokens replaced (a re-authorisation), Active again. The tokens are sealed under a fresh data key.
 */
export async function saveConnection(
  db: Queryable,
  keys: SecretKeys,
  namespace: string,
  input: { provider: string; endUser: string; scopes: string[]; tokens: ConnectionTokens; expiresAt: Date | null },
): Promise<Connection> {
  const current = toKeyring(keys).current;
  const values = (id: string) => {
    // The seal is bound to the row's id: sealed again for the existing row's.
    const sealed = sealSecret(current, namespace, connectionAad(id), JSON.stringify(input.tokens));
    return [
      id,
      namespace,
      input.provider,
      input.endUser,
      input.scopes,
      sealed.iv,
      sealed.ciphertext,
      sealed.tag,
      sealed.keyId,
      sealed.wrappedKey,
      input.tokens.refreshToken !== undefined,
      input.expiresAt,
    ];
  };
  // A new connection; when one exists already (also one a concurrent callback just made: DO NOTHING waits for it),
  // its row is locked and its tokens replaced under its own id.
  const { rows: made } = await db.query<ConnectionRow>(
    'INSERT INTO mt_connections (id, namespace, provider, end_user, status, scopes, iv, ciphertext, tag, key_id, ' +
      "wrapped_key, has_refresh_token, access_expires_at) VALUES ($1, $2, $3, $4, 'Active', $5, $6, $7, $8, $9, $10, $11, $12) " +
      `ON CONFLICT (namespace, provider, end_user) DO NOTHING RETURNING ${CONNECTION_COLUMNS}`,
    values(randomUUID()),
  );
  if (made[0]) return connectionOf(made[0]);
  const { rows: existing } = await db.query<{ id: string }>(
    'SELECT id FROM mt_connections WHERE namespace = $1 AND provider = $2 AND end_user = $3 FOR UPDATE',
    [namespace, input.provider, input.endUser],
  );
  const { rows } = await db.query<ConnectionRow>(
    "UPDATE mt_connections SET status = 'Active', scopes = $5, iv = $6, ciphertext = $7, tag = $8, key_id = $9, " +
      'wrapped_key = $10, has_refresh_token = $11, access_expires_at = $12, updated_at = now() ' +
      `WHERE id = $1 AND namespace = $2 AND provider = $3 AND end_user = $4 RETURNING ${CONNECTION_COLUMNS}`,
    values(existing[0]!.id),
  );
  return connectionOf(rows[0]!);
}

/**
 * The connection of (namespace, provider, end user), made first when there is none as a connection whose token has
 * already expired (an empty access token, expiry at the epoch): the row that the first token of a client credentials
 * connector is then asked for under, with {@link refreshConnection}, so that calls at once in every process ask for
 * it once, as they do for every later token. An existing connection is answered as it is.
 */
export async function reserveConnection(
  db: Queryable,
  keys: SecretKeys,
  namespace: string,
  input: { provider: string; endUser: string },
  attempts = 3,
): Promise<ConnectionForCall> {
  const id = randomUUID();
  const tokens: ConnectionTokens = { accessToken: '', tokenType: 'Bearer' };
  const sealed = sealSecret(toKeyring(keys).current, namespace, connectionAad(id), JSON.stringify(tokens));
  // DO NOTHING waits for a concurrent insert of the same connection to commit, then finds nothing to do.
  await db.query(
    'INSERT INTO mt_connections (id, namespace, provider, end_user, status, scopes, iv, ciphertext, tag, key_id, ' +
      "wrapped_key, has_refresh_token, access_expires_at) VALUES ($1, $2, $3, $4, 'Active', '{}', $5, $6, $7, $8, $9, " +
      "false, 'epoch') ON CONFLICT (namespace, provider, end_user) DO NOTHING",
    [
      id,
      namespace,
      input.provider,
      input.endUser,
      sealed.iv,
      sealed.ciphertext,
      sealed.tag,
      sealed.keyId,
      sealed.wrappedKey,
    ],
  );
  const found = await findConnectionForCall(db, keys, namespace, input.provider, input.endUser);
  if (found !== undefined) return found;
  // Deleted between the two statements (DELETE /v1/connections/{id}): made again, a few times at most.
  if (attempts <= 1) throw new Error(`connection ${input.provider}/${input.endUser} deleted as it was made`);
  return reserveConnection(db, keys, namespace, input, attempts - 1);
}

/** The connections of `namespace`, by provider and end user, optionally of one provider and/or one end user. */
export async function listConnections(
  db: Queryable,
  namespace: string,
  filter: { provider?: string; endUser?: string } = {},
): Promise<Connection[]> {
  const { rows } = await db.query<ConnectionRow>(
    `SELECT ${CONNECTION_COLUMNS} FROM mt_connections WHERE namespace = $1 ` +
      'AND ($2::text IS NULL OR provider = $2) AND ($3::text IS NULL OR end_user = $3) ORDER BY provider, end_user',
    [namespace, filter.provider ?? null, filter.endUser ?? null],
  );
  return rows.map(connectionOf);
}

/** One connection of `namespace` by id (never its tokens); `api:connections:not-found` when there is none. */
export async function getConnection(db: Queryable, namespace: string, id: string): Promise<Connection> {
  if (!isUuid(id)) throw storeErrors.create('api:connections:not-found', { id });
  const { rows } = await db.query<ConnectionRow>(
    `SELECT ${CONNECTION_COLUMNS} FROM mt_connections WHERE namespace = $1 AND id = $2`,
    [namespace, id],
  );
  if (!rows[0]) throw storeErrors.create('api:connections:not-found', { id });
  return connectionOf(rows[0]);
}

/** Deletes a connection of `namespace` (its tokens with it); `api:connections:not-found` when there is none. */
export async function deleteConnection(db: Queryable, namespace: string, id: string): Promise<Connection> {
  if (!isUuid(id)) throw storeErrors.create('api:connections:not-found', { id });
  const { rows } = await db.query<ConnectionRow>(
    `DELETE FROM mt_connections WHERE namespace = $1 AND id = $2 RETURNING ${CONNECTION_COLUMNS}`,
    [namespace, id],
  );
  if (!rows[0]) throw storeErrors.create('api:connections:not-found', { id });
  return connectionOf(rows[0]);
}

/** Opens the tokens of connection `id` of `namespace` (for the gateway and tests; never for an answer). */
export async function readConnectionTokens(
  db: Queryable,
  keys: SecretKeys,
  namespace: string,
  id: string,
): Promise<ConnectionTokens | undefined> {
  if (!isUuid(id)) return undefined;
  const { rows } = await db.query<EnvelopeRow>(
    'SELECT iv, ciphertext, tag, key_id, wrapped_key FROM mt_connections WHERE namespace = $1 AND id = $2',
    [namespace, id],
  );
  if (!rows[0]) return undefined;
  return JSON.parse(openSecret(keys, namespace, connectionAad(id), envelopeOf(rows[0]))) as ConnectionTokens;
}

/** A connection as a call uses it: its status, granted scopes, expiry and opened tokens (never for an answer). */
export interface ConnectionForCall {
  id: string;
  status: Connection['status'];
  scopes: string[];
  expiresAt: Date | null;
  tokens: ConnectionTokens;
}

type CallRow = EnvelopeRow & {
  id: string;
  status: Connection['status'];
  scopes: string[];
  access_expires_at: Date | null;
};

function forCall(keys: SecretKeys, namespace: string, row: CallRow): ConnectionForCall {
  return {
    id: row.id,
    status: row.status,
    scopes: row.scopes,
    expiresAt: row.access_expires_at,
    tokens: JSON.parse(openSecret(keys, namespace, connectionAad(row.id), envelopeOf(row))) as ConnectionTokens,
  };
}

const CALL_COLUMNS = 'id, status, scopes, access_expires_at, iv, ciphertext, tag, key_id, wrapped_key';

/** The connection of (namespace, provider, end user) with its tokens opened, for a call; undefined when there is none. */
export async function findConnectionForCall(
  db: Queryable,
  keys: SecretKeys,
  namespace: string,
  provider: string,
  endUser: string,
): Promise<ConnectionForCall | undefined> {
  // On every OAuth2 call's path: prepared once per pooled connection (decision 0280).
  const { rows } = await db.query<CallRow>(
    `SELECT ${CALL_COLUMNS} FROM mt_connections WHERE namespace = $1 AND provider = $2 AND end_user = $3`,
    [namespace, provider, endUser],
    { name: 'mt_connection_for_call' },
  );
  return rows[0] && forCall(keys, namespace, rows[0]);
}

/** What a refresh answered: new tokens, or the provider's refusal of the refresh token. */
export type RefreshOutcome = { tokens: ConnectionTokens; scopes: string[]; expiresAt: Date | null } | { refused: true };

/** What {@link refreshConnection} answers when another process held the connection's row past the wait's deadline. */
export const REFRESH_BUSY = 'busy' as const;

/**
 * Refreshes connection `id` at most once at a time across every process, without ever waiting on a lock: in one
 * transaction its row is locked (`FOR UPDATE SKIP LOCKED`); when, read under the lock, it is no longer `stale`
 * (another process refreshed it) its tokens are answered as they are; else `refresh` is called with its refresh token
 * and its answer stored in the same transaction, sealed under a fresh data key (a rotated refresh token with it), or,
 * when the provider refused the refresh token, the connection is marked NeedsReauthorization. While another
 * transaction holds the row (its refresh), no pooled connection is held: the row is tried again every
 * {@link REFRESH_POLL_MS} until {@link REFRESH_WAIT_MS} passed, then {@link REFRESH_BUSY} is answered (nothing
 * changed, nothing sent). A holder that dies releases the row with its connection, and the next try refreshes.
 * Undefined when the connection is gone. A `refresh` that throws changes nothing.
 */
export async function refreshConnection(
  db: Db,
  keys: SecretKeys,
  namespace: string,
  id: string,
  stale: (connection: ConnectionForCall) => boolean,
  refresh: (connection: ConnectionForCall) => Promise<RefreshOutcome>,
  waitMs: number = REFRESH_WAIT_MS,
): Promise<ConnectionForCall | undefined | typeof REFRESH_BUSY> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const tried = await tryRefreshConnection(db, keys, namespace, id, stale, refresh);
    if (tried !== REFRESH_BUSY) return tried;
    const left = deadline - Date.now();
    if (left <= 0) return REFRESH_BUSY;
    await sleep(Math.min(REFRESH_POLL_MS, left));
  }
}

/** One try of {@link refreshConnection}: {@link REFRESH_BUSY} when another transaction holds the row. */
async function tryRefreshConnection(
  db: Db,
  keys: SecretKeys,
  namespace: string,
  id: string,
  stale: (connection: ConnectionForCall) => boolean,
  refresh: (connection: ConnectionForCall) => Promise<RefreshOutcome>,
): Promise<ConnectionForCall | undefined | typeof REFRESH_BUSY> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<CallRow>(
      `SELECT ${CALL_COLUMNS} FROM mt_connections WHERE namespace = $1 AND id = $2 FOR UPDATE SKIP LOCKED`,
      [namespace, id],
    );
    if (!rows[0]) {
      // Skipped (held by another transaction) or gone.
      const { rows: exists } = await tx.query('SELECT 1 FROM mt_connections WHERE namespace = $1 AND id = $2', [
        namespace,
        id,
      ]);
      return exists.length > 0 ? REFRESH_BUSY : undefined;
    }
    const current = forCall(keys, namespace, rows[0]);
    if (current.status !== 'Active' || !stale(current)) return current;
    const outcome = await refresh(current);
    if ('refused' in outcome) {
      await tx.query(
        "UPDATE mt_connections SET status = 'NeedsReauthorization', updated_at = now() WHERE namespace = $1 AND id = $2",
        [namespace, id],
      );
      return { ...current, status: 'NeedsReauthorization' as const };
    }
    const sealed = sealSecret(toKeyring(keys).current, namespace, connectionAad(id), JSON.stringify(outcome.tokens));
    await tx.query(
      'UPDATE mt_connections SET iv = $3, ciphertext = $4, tag = $5, key_id = $6, wrapped_key = $7, scopes = $8, ' +
        'has_refresh_token = $9, access_expires_at = $10, refreshed_at = now(), updated_at = now() ' +
        'WHERE namespace = $1 AND id = $2',
      [
        namespace,
        id,
        sealed.iv,
        sealed.ciphertext,
        sealed.tag,
        sealed.keyId,
        sealed.wrappedKey,
        outcome.scopes,
        outcome.tokens.refreshToken !== undefined,
        outcome.expiresAt,
      ],
    );
    return { id, status: 'Active', scopes: outcome.scopes, expiresAt: outcome.expiresAt, tokens: outcome.tokens };
  });
}

/**
 * The runs of `namespace` that wait (PendingAuthorization) for `endUser` to connect at `provider`: their last event
 * is the `run-waiting` that names them. At most `limit`.
 */
export async function runsAwaitingConnection(
  db: Queryable,
  namespace: string,
  provider: string,
  endUser: string,
  limit = 1000,
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT r.id FROM mt_runs r JOIN mt_run_events e ON e.run_id = r.id AND e.seq = r.last_seq ' +
      "WHERE r.namespace = $1 AND r.status = 'PendingAuthorization' AND e.type = 'run-waiting' " +
      "AND (e.data::jsonb)->'authorizations' @> jsonb_build_array(jsonb_build_object('provider', $2::text, 'endUser', $3::text)) " +
      'ORDER BY r.created_at LIMIT $4',
    [namespace, provider, endUser, limit],
  );
  return rows.map((row) => row.id);
}

/** The runs waiting for an authorisation whose wait expired (the `expiresAt` of their last `run-waiting`). */
export async function expiredAuthorizationWaits(db: Queryable, limit = 100): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT r.id FROM mt_runs r JOIN mt_run_events e ON e.run_id = r.id AND e.seq = r.last_seq ' +
      "WHERE r.status = 'PendingAuthorization' AND e.type = 'run-waiting' " +
      "AND (e.data->>'expiresAt')::timestamptz < now() LIMIT $1",
    [limit],
  );
  return rows.map((row) => row.id);
}

/**
 * The `authorization-requested` events a run waits on: those stored since its last model response or last
 * connection made, in order (their data: the call, provider, end user, scopes, reason and connect URL).
 */
export async function pendingAuthorizations(db: Queryable, runId: string): Promise<Record<string, unknown>[]> {
  const { rows } = await db.query<{ data: Record<string, unknown> }>(
    "SELECT data FROM mt_run_events WHERE run_id = $1 AND type = 'authorization-requested' AND seq > " +
      "coalesce((SELECT max(seq) FROM mt_run_events WHERE run_id = $1 AND type IN ('model-response', 'authorization-completed')), 0) " +
      'ORDER BY seq',
    [runId],
  );
  return rows.map((row) => row.data);
}
