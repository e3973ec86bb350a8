import { randomBytes, randomUUID } from 'node:crypto';
import type { Queryable } from '../db/db.js';
import { storeErrors } from '../errors.js';
import { iso } from '../internal/rows.js';
import { openSecret, sealSecret } from '../secrets/envelope.js';
import { type SecretKeys, toKeyring } from '../secrets/keyring.js';
import { type EnvelopeRow, envelopeOf } from '../secrets/secrets.js';
import { WAKE_CHANNEL } from '../wake/notify.js';

// Outbound webhooks (docs/notifications.md, decision 0255): endpoints of a namespace with their signing secrets, and
// the deliveries written in the statement of the change that causes each event (the outbox), which the delivery loop
// of `mt serve` and `mt worker` sends.

/** An endpoint as the API shows it: never its secret. */
export interface WebhookEndpoint {
  id: string;
  namespace: string;
  url: string;
  /** The event types it receives; empty: every type. */
  events: string[];
  description: string | null;
  enabled: boolean;
  /** Until when the previous secret still signs (a rotation's grace); null when there is none. */
  previousSecretUntil: string | null;
  createdAt: string;
  updatedAt: string;
}

/** One delivery of one event to one endpoint: its log row. */
export interface WebhookDelivery {
  /** Also the `webhook-id` header of every attempt, as `msg_<id without dashes>`. */
  id: string;
  /** The `webhook-id` of every attempt. */
  messageId: string;
  endpointId: string;
  eventType: string;
  status: 'Pending' | 'Delivered' | 'Failed';
  attempts: number;
  /** When it is sent (again); null once Delivered or Failed. */
  nextAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

/** A delivery taken by the loop: what it sends, where, and every secret that signs it. */
export interface ClaimedDelivery {
  id: string;
  messageId: string;
  namespace: string;
  endpointId: string;
  url: string;
  payload: string;
  attempts: number;
  /** The current secret first, then the previous one while its grace lasts (`whsec_...`). */
  secrets: string[];
}

// The AAD of an endpoint's sealed secrets: a value moved from another table does not open (key-rotation.ts re-wraps).
export const webhookAad = (id: string) => `webhook:${id}`;

/** A new signing secret, as Standard Webhooks writes them: `whsec_` and 32 random bytes in base64. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The `webhook-id` of a delivery. */
export const webhookMessageId = (deliveryId: string) => `msg_${deliveryId.replaceAll('-', '')}`;

const TIMESTAMP = `to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The outbox of one statement: a data-modifying CTE named `name` that writes one delivery for each enabled endpoint of
 * the event's namespace that wants its type, from the rows of `source` (a CTE or table of the same statement, so
 * nothing is written when the change itself wrote nothing). `namespace`, `type` and `data` are SQL expressions over
 * `source`'s columns (`type` NULL: no event for that row). Pair it with {@link outboxWoken} in the statement's select.
 */
export function outboxCte(name: string, source: string, e: { namespace: string; type: string; data: string }): string {
  return (
    `${name} AS (INSERT INTO mt_webhook_deliveries (id, endpoint_id, namespace, event_type, payload) ` +
    `SELECT gen_random_uuid(), w.id, w.namespace, ev.type, ` +
    `json_build_object('type', ev.type, 'timestamp', ${TIMESTAMP}, 'data', ev.data)::text ` +
    `FROM (SELECT ${e.namespace} AS namespace, ${e.type}::text AS type, ${e.data} AS data FROM ${source}) ev ` +
    'JOIN mt_webhook_endpoints w ON w.namespace = ev.namespace AND w.enabled ' +
    'AND (cardinality(w.events) = 0 OR ev.type = ANY(w.events)) WHERE ev.type IS NOT NULL RETURNING 1)'
  );
}

/** A select-list expression that wakes `webhooks` at commit when the outbox CTE `name` wrote a delivery. */
export function outboxWoken(name: string): string {
  return (
    `(SELECT count(woken::text) FROM (SELECT pg_notify('${WAKE_CHANNEL}', 'webhooks') AS woken ` +
    `FROM (SELECT 1 FROM ${name} LIMIT 1) one) n) AS ${name}_woken`
  );
}

interface EndpointRow extends EnvelopeRow {
  id: string;
  namespace: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  previous_until: Date | null;
  created_at: Date;
  updated_at: Date;
}

const ENDPOINT_COLUMNS =
  'id, namespace, url, events, description, enabled, iv, ciphertext, tag, key_id, wrapped_key, previous_until, ' +
  'created_at, updated_at';

function toEndpoint(row: EndpointRow): WebhookEndpoint {
  const grace = row.previous_until !== null && row.previous_until.getTime() > Date.now();
  return {
    id: row.id,
    namespace: row.namespace,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    previousSecretUntil: grace ? iso(row.previous_until!) : null,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

interface Secrets {
  current: string;
  previous?: string;
}

function seal(keys: SecretKeys, namespace: string, id: string, secrets: Secrets) {
  return sealSecret(toKeyring(keys).current, namespace, webhookAad(id), JSON.stringify(secrets));
}

function open(keys: SecretKeys, row: EnvelopeRow & { namespace: string; id: string }): Secrets {
  return JSON.parse(openSecret(keys, row.namespace, webhookAad(row.id), envelopeOf(row))) as Secrets;
}

function notFound(id: string) {
  return storeErrors.create('api:webhooks:not-found', { id });
}

/** Stores a new endpoint with a new signing secret; resolves with the endpoint and the secret (shown this once). */
export async function createWebhookEndpoint(
  db: Queryable,
  keys: SecretKeys,
  namespace: string,
  endpoint: { url: string; events: string[]; description?: string | null; enabled?: boolean },
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const id = randomUUID();
  const secret = newWebhookSecret();
  const sealed = seal(keys, namespace, id, { current: secret });
  const { rows } = await db.query<EndpointRow>(
    'INSERT INTO mt_webhook_endpoints (id, namespace, url, events, description, enabled, iv, ciphertext, tag, key_id, ' +
      `wrapped_key) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${ENDPOINT_COLUMNS}`,
    [
      id,
      namespace,
      endpoint.url,
      endpoint.events,
      endpoint.description ?? null,
      endpoint.enabled ?? true,
      sealed.iv,
      sealed.ciphertext,
      sealed.tag,
      sealed.keyId,
      sealed.wrappedKey,
    ],
  );
  return { endpoint: toEndpoint(rows[0]!), secret };
}

/** The endpoints of a namespace, oldest first. */
export async function listWebhookEndpoints(db: Queryable, namespace: string): Promise<WebhookEndpoint[]> {
  const { rows } = await db.query<EndpointRow>(
    `SELECT ${ENDPOINT_COLUMNS} FROM mt_webhook_endpoints WHERE namespace = $1 ORDER BY created_at, id`,
    [namespace],
  );
  return rows.map(toEndpoint);
}

/** One endpoint of a namespace; `api:webhooks:not-found` when there is none. */
export async function getWebhookEndpoint(db: Queryable, namespace: string, id: string): Promise<WebhookEndpoint> {
  const { rows } = await db.query<EndpointRow>(
    `SELECT ${ENDPOINT_COLUMNS} FROM mt_webhook_endpoints WHERE namespace = $1 AND id = $2`,
    [namespace, id],
  );
  if (rows[0] === undefined) throw notFound(id);
  return toEndpoint(rows[0]);
}

/** Changes an endpoint's URL, events, description or enabled (what is given); `api:webhooks:not-found`. */
export async function updateWebhookEndpoint(
  db: Queryable,
  namespace: string,
  id: string,
  change: { url?: string; events?: string[]; description?: string | null; enabled?: boolean },
): Promise<{ before: WebhookEndpoint; after: WebhookEndpoint }> {
  const before = await getWebhookEndpoint(db, namespace, id);
  const { rows } = await db.query<EndpointRow>(
    'UPDATE mt_webhook_endpoints SET url = COALESCE($3, url), events = COALESCE($4, events), ' +
      'description = CASE WHEN $5::boolean THEN $6 ELSE description END, enabled = COALESCE($7, enabled), ' +
      `updated_at = now() WHERE namespace = $1 AND id = $2 RETURNING ${ENDPOINT_COLUMNS}`,
    [
      namespace,
      id,
      change.url ?? null,
      change.events ?? null,
      change.description !== undefined,
      change.description ?? null,
      change.enabled ?? null,
    ],
  );
  if (rows[0] === undefined) throw notFound(id);
  return { before, after: toEndpoint(rows[0]) };
}

/** Deletes an endpoint and its delivery log (its pending deliveries are not sent); `api:webhooks:not-found`. */
export async function deleteWebhookEndpoint(db: Queryable, namespace: string, id: string): Promise<WebhookEndpoint> {
  const { rows } = await db.query<EndpointRow>(
    `DELETE FROM mt_webhook_endpoints WHERE namespace = $1 AND id = $2 RETURNING ${ENDPOINT_COLUMNS}`,
    [namespace, id],
  );
  if (rows[0] === undefined) throw notFound(id);
  return toEndpoint(rows[0]);
}

/**
 * Gives an endpoint a new signing secret (shown this once). For `graceSeconds` the old one signs every delivery too
 * (a second signature in `webhook-signature`), so a receiver can switch without losing one; 0 ends it at once.
 */
export async function rotateWebhookSecret(
  db: Queryable,
  keys: SecretKeys,
  namespace: string,
  id: string,
  graceSeconds: number,
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const { rows: found } = await db.query<EndpointRow>(
    `SELECT ${ENDPOINT_COLUMNS} FROM mt_webhook_endpoints WHERE namespace = $1 AND id = $2 FOR UPDATE`,
    [namespace, id],
  );
  const row = found[0];
  if (row === undefined) throw notFound(id);
  const secret = newWebhookSecret();
  const secrets: Secrets =
    graceSeconds > 0 ? { current: secret, previous: open(keys, row).current } : { current: secret };
  const sealed = seal(keys, namespace, id, secrets);
  const { rows } = await db.query<EndpointRow>(
    'UPDATE mt_webhook_endpoints SET iv = $3, ciphertext = $4, tag = $5, key_id = $6, wrapped_key = $7, ' +
      'previous_until = CASE WHEN $8::float8 > 0 THEN now() + make_interval(secs => $8::float8) ELSE NULL END, ' +
      `updated_at = now() WHERE namespace = $1 AND id = $2 RETURNING ${ENDPOINT_COLUMNS}`,
    [namespace, id, sealed.iv, sealed.ciphertext, sealed.tag, sealed.keyId, sealed.wrappedKey, graceSeconds],
  );
  return { endpoint: toEndpoint(rows[0]!), secret };
}

interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_type: string;
  status: 'Pending' | 'Delivered' | 'Failed';
  attempts: number;
  next_attempt_at: Date;
  last_status: number | null;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
}

const DELIVERY_COLUMNS =
  'id, endpoint_id, event_type, status, attempts, next_attempt_at, last_status, last_error, created_at, delivered_at';

function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    messageId: webhookMessageId(row.id),
    endpointId: row.endpoint_id,
    eventType: row.event_type,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.status === 'Pending' ? iso(row.next_attempt_at) : null,
    lastStatus: row.last_status,
    lastError: row.last_error,
    createdAt: iso(row.created_at),
    deliveredAt: row.delivered_at === null ? null : iso(row.delivered_at),
  };
}

/**
 * Writes a `webhook.test` delivery for one endpoint (enabled or not: a test of a disabled endpoint is sent too) and
 * wakes the delivery loop; `api:webhooks:not-found`.
 */
export async function enqueueWebhookTest(db: Queryable, namespace: string, id: string): Promise<WebhookDelivery> {
  const { rows } = await db.query<DeliveryRow>(
    'INSERT INTO mt_webhook_deliveries (id, endpoint_id, namespace, event_type, payload) ' +
      `SELECT gen_random_uuid(), w.id, w.namespace, 'webhook.test', json_build_object('type', 'webhook.test', ` +
      `'timestamp', ${TIMESTAMP}, 'data', json_build_object('endpointId', w.id, 'namespace', w.namespace))::text ` +
      `FROM mt_webhook_endpoints w WHERE w.namespace = $1 AND w.id = $2 RETURNING ${DELIVERY_COLUMNS}, ` +
      `pg_notify('${WAKE_CHANNEL}', 'webhooks') AS woken`,
    [namespace, id],
  );
  if (rows[0] === undefined) throw notFound(id);
  return toDelivery(rows[0]);
}

/** The deliveries of an endpoint, newest first, optionally of one status; `api:webhooks:not-found`. */
export async function listWebhookDeliveries(
  db: Queryable,
  namespace: string,
  endpointId: string,
  filter: { status?: string; limit: number },
): Promise<WebhookDelivery[]> {
  await getWebhookEndpoint(db, namespace, endpointId);
  const { rows } = await db.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM mt_webhook_deliveries WHERE namespace = $1 AND endpoint_id = $2 ` +
      'AND ($3::text IS NULL OR status = $3) ORDER BY created_at DESC, id DESC LIMIT $4',
    [namespace, endpointId, filter.status ?? null, filter.limit],
  );
  return rows.map(toDelivery);
}

/**
 * Takes up to `limit` due deliveries (Pending, due, not held by a live process) for `leaseMs`, skipping rows another
 * process is taking at the same moment (FOR UPDATE SKIP LOCKED), and counts the attempt. One short statement: no
 * transaction is held open while they are sent. A delivery whose endpoint is disabled is left where it is.
 */
export async function claimWebhookDeliveries(
  db: Queryable,
  keys: SecretKeys,
  limit: number,
  leaseMs: number,
): Promise<ClaimedDelivery[]> {
  const { rows } = await db.query<
    EndpointRow & { delivery_id: string; payload: string; attempts: number; endpoint_id: string }
  >(
    'WITH due AS (SELECT d.id FROM mt_webhook_deliveries d JOIN mt_webhook_endpoints w ON w.id = d.endpoint_id ' +
      "WHERE d.status = 'Pending' AND d.next_attempt_at <= now() AND (d.claimed_until IS NULL OR d.claimed_until <= now()) " +
      "AND (w.enabled OR d.event_type = 'webhook.test') " +
      'ORDER BY d.next_attempt_at LIMIT $1 FOR UPDATE OF d SKIP LOCKED), ' +
      'taken AS (UPDATE mt_webhook_deliveries d SET claimed_until = now() + make_interval(secs => $2::float8 / 1000), ' +
      'attempts = d.attempts + 1 FROM due WHERE d.id = due.id RETURNING d.id, d.endpoint_id, d.payload, d.attempts) ' +
      'SELECT taken.id AS delivery_id, taken.endpoint_id, taken.payload, taken.attempts, w.id, w.namespace, w.url, ' +
      'w.events, w.description, w.enabled, w.iv, w.ciphertext, w.tag, w.key_id, w.wrapped_key, w.previous_until, ' +
      'w.created_at, w.updated_at FROM taken JOIN mt_webhook_endpoints w ON w.id = taken.endpoint_id',
    [limit, leaseMs],
  );
  return rows.map((row) => {
    const secrets = open(keys, row);
    const grace = row.previous_until !== null && row.previous_until.getTime() > Date.now();
    return {
      id: row.delivery_id,
      messageId: webhookMessageId(row.delivery_id),
      namespace: row.namespace,
      endpointId: row.endpoint_id,
      url: row.url,
      payload: row.payload,
      attempts: row.attempts,
      secrets: grace && secrets.previous !== undefined ? [secrets.current, secrets.previous] : [secrets.current],
    };
  });
}

/**
 * Records an attempt's outcome: Delivered, or (failed) Pending again after `retryMs` — or Failed when it was the
 * last of `maxAttempts`. Releases the row either way.
 */
export async function finishWebhookDelivery(
  db: Queryable,
  id: string,
  outcome: { ok: boolean; status?: number; error?: string; retryMs: number; maxAttempts: number },
): Promise<void> {
  await db.query(
    'UPDATE mt_webhook_deliveries SET claimed_until = NULL, last_status = $2, last_error = $3, ' +
      "status = CASE WHEN $4::boolean THEN 'Delivered' WHEN attempts >= $6::int THEN 'Failed' ELSE 'Pending' END, " +
      'delivered_at = CASE WHEN $4::boolean THEN now() ELSE NULL END, ' +
      'next_attempt_at = CASE WHEN $4::boolean THEN next_attempt_at ELSE now() + make_interval(secs => $5::float8 / 1000) END ' +
      "WHERE id = $1 AND status = 'Pending'",
    [
      id,
      outcome.status ?? null,
      outcome.ok ? null : (outcome.error ?? null),
      outcome.ok,
      outcome.retryMs,
      outcome.maxAttempts,
    ],
  );
}

/**
 * In how many milliseconds the next delivery is due (a retry, or a row a stopped process held until its lease ends),
 * by the database's clock (0 when one is due now); undefined when none is pending. One read-only statement.
 */
export async function nextWebhookDue(db: Queryable): Promise<number | undefined> {
  const { rows } = await db.query<{ ms: number | null }>(
    // GREATEST skips a NULL: the CASE keeps "none pending" apart from "due now".
    'SELECT CASE WHEN due IS NULL THEN NULL ELSE GREATEST(0, extract(epoch FROM due - now()) * 1000)::float8 END AS ms ' +
      'FROM (SELECT min(GREATEST(d.next_attempt_at, COALESCE(d.claimed_until, d.next_attempt_at))) AS due ' +
      'FROM mt_webhook_deliveries d JOIN mt_webhook_endpoints w ON w.id = d.endpoint_id ' +
      "WHERE d.status = 'Pending' AND (w.enabled OR d.event_type = 'webhook.test')) next",
  );
  const ms = rows[0]?.ms;
  return ms === null || ms === undefined ? undefined : Number(ms);
}
