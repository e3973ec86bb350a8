import { isIP } from 'node:net';
import { approvalTtlMsFromEnv } from '@maitento/engine';
import {
  DEFAULT_CACHE_LEASE_MS,
  DEFAULT_FILE_LIMITS,
  FALLBACK_POLL_MS,
  type FileLimits,
  IDEMPOTENCY_LEASE_SECONDS,
  MCP_SESSIONS_TICK_MS,
} from '@maitento/store';
import type { ExtractBudget } from '../knowledge/index.js';
import { serverErrors } from '../errors.js';
import type { McpSettings } from '../mcp/settings.js';
import { DEFAULT_STREAM_TIMING } from '../streams/event-stream.js';

// The one module of the server that reads the environment (docs/configuration.md). The engine reads its own
// (MT_APPROVAL_TTL included, taken from it here); the egress rules (MT_EGRESS_*) are read by @maitento/egress.

/** How long an approval made over MCP stays valid when MT_APPROVAL_TTL is unset: one hour. */
export const DEFAULT_MCP_APPROVAL_TTL_MS = 3_600_000;

// Unset and empty are the same: not set.
function envText(name: string): string | undefined {
  return process.env[name] || undefined;
}

function envSeconds(name: string): number | undefined {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  return Number.isFinite(value) && value > 0 ? value * 1000 : undefined;
}

// A whole number of at least `least` (1), or `fallback` when unset or unusable.
function envLimit(name: string, fallback: number, least = 1): number {
  const raw = process.env[name]?.trim();
  const value = raw === undefined || raw === '' ? Number.NaN : Number(raw);
  return Number.isInteger(value) && value >= least ? value : fallback;
}

/** `DATABASE_URL`: PostgreSQL's connection string, or undefined for the embedded PGlite. */
export function databaseUrlFromEnv(): string | undefined {
  return envText('DATABASE_URL');
}

/** Whether a serving process migrates at start (`on`, the default) or only checks the schema (`off`). */
export type MigrateMode = 'on' | 'off';

/**
 * `MT_MIGRATE`: `on` (the default: `mt serve` and `mt worker` apply missing migrations at start, the single-binary
 * path) or `off` (they only check that the schema is current and compatible and refuse to start otherwise; `mt
 * migrate` runs first, as the owner role). Anything else is `api:server:migrate-invalid`.
 */
export function migrateModeFromEnv(): MigrateMode {
  const raw = envText('MT_MIGRATE')?.trim().toLowerCase();
  if (raw === undefined || raw === 'on') return 'on';
  if (raw === 'off') return 'off';
  throw serverErrors.create('api:server:migrate-invalid', { value: JSON.stringify(process.env.MT_MIGRATE) });
}

/** `MT_PUBLIC_URL`: this server's public origin, the only target of `auth = "Maitento"` connectors. */
export function publicUrlFromEnv(): string | undefined {
  return envText('MT_PUBLIC_URL');
}

/** `MT_BOOTSTRAP_KEY`: the first admin key on an empty database. */
export function bootstrapKeyFromEnv(): string | undefined {
  return envText('MT_BOOTSTRAP_KEY');
}

/** `MT_SECRET_KEY` and `MT_SECRET_KEY_PREVIOUS`: the master key and the keys a rotation moves away from. */
export function secretKeysFromEnv(): { value: string | undefined; previous: string | undefined } {
  return { value: process.env.MT_SECRET_KEY, previous: process.env.MT_SECRET_KEY_PREVIOUS };
}

/**
 * `MT_TRACE_URL_TEMPLATE`: where the console links a run's trace, `{traceId}` replaced by its trace id (for example
 * `http://jaeger:16686/trace/{traceId}`); undefined for no link (docs/telemetry.md).
 */
export function traceUrlTemplateFromEnv(): string | undefined {
  return envText('MT_TRACE_URL_TEMPLATE');
}

/**
 * `MT_CACHE_LEASE_MS`: the cache lease's length L on PostgreSQL (default 1000, at least 100): a server serves its
 * cache without reading the epoch for up to 0.9 L after a renewal, and a write waits at most L for a stalled one.
 */
export function cacheLeaseMsFromEnv(): number {
  return envLimit('MT_CACHE_LEASE_MS', DEFAULT_CACHE_LEASE_MS, 100);
}

/**
 * `MT_IDEMPOTENCY_LEASE`: how long, in seconds, a request holds its Idempotency-Key without a renewal (default 220, at
 * least 1): a key whose request died before any effect is taken over by a retry after it (docs/rest-api.md).
 */
export function idempotencyLeaseSecondsFromEnv(): number {
  return envLimit('MT_IDEMPOTENCY_LEASE', IDEMPOTENCY_LEASE_SECONDS);
}

/** `MT_LOG_LEVEL`: the server's log level (default info). */
export function logLevelFromEnv(): string {
  return process.env.MT_LOG_LEVEL ?? 'info';
}

/** `MT_LOG_SLOW_MS`: requests slower than this many milliseconds are logged at info (default 1000). */
export function slowRequestMsFromEnv(): number {
  const raw = process.env.MT_LOG_SLOW_MS;
  const value = Number(raw);
  return Number.isFinite(value) && value >= 0 && raw !== '' ? value : 1000;
}

/**
 * `MT_FILE_MAX_BYTES` and `MT_FILE_SYSTEM_MAX_BYTES`: the largest file and the most all files of one file system may
 * hold, in bytes (default 10 MiB and 1 GiB), with `overrides` (tests) taking precedence.
 */
export function fileLimitsFromEnv(overrides: Partial<FileLimits> = {}): FileLimits {
  return {
    maxFileBytes: overrides.maxFileBytes ?? envLimit('MT_FILE_MAX_BYTES', DEFAULT_FILE_LIMITS.maxFileBytes),
    maxFileSystemBytes:
      overrides.maxFileSystemBytes ?? envLimit('MT_FILE_SYSTEM_MAX_BYTES', DEFAULT_FILE_LIMITS.maxFileSystemBytes),
  };
}

/**
 * `MT_STREAM_KEEPALIVE_MS`: how long a run event stream may stay silent before the server writes a keep-alive comment
 * (default 15000, at least 100): lower it behind a proxy that closes idle connections sooner.
 */
export function streamKeepAliveMsFromEnv(): number {
  return envLimit('MT_STREAM_KEEPALIVE_MS', DEFAULT_STREAM_TIMING.keepAliveMs, 100);
}

/** `MT_RUN_STREAMS_PER_KEY`: the most run event streams one API key holds open at once (default 20). */
export function runStreamsPerKeyFromEnv(): number {
  return envLimit('MT_RUN_STREAMS_PER_KEY', 20);
}

/**
 * The MCP settings from the environment: `MT_MCP_APPROVAL_WAIT`, `MT_MCP_LIST_POLL`, `MT_MCP_SESSION_IDLE` (seconds),
 * `MT_APPROVAL_TTL` (the engine's reader), `MT_MCP_SESSIONS_PER_KEY`.
 */
export function mcpSettingsFromEnv(overrides: Partial<McpSettings> = {}): McpSettings {
  return {
    // Under the 60 s request timeout of the SDK's clients (and of most hosts), so the answer arrives in time.
    approvalWaitMs: envSeconds('MT_MCP_APPROVAL_WAIT') ?? 45_000,
    approvalPollMs: FALLBACK_POLL_MS,
    progressMs: 5_000,
    // An approval made outside a run has no run to end it: without MT_APPROVAL_TTL it lives an hour (docs/mcp.md).
    approvalTtlMs: approvalTtlMsFromEnv() ?? DEFAULT_MCP_APPROVAL_TTL_MS,
    listChangedPollMs: envSeconds('MT_MCP_LIST_POLL') ?? MCP_SESSIONS_TICK_MS,
    sessionIdleMs: envSeconds('MT_MCP_SESSION_IDLE') ?? 30 * 60_000,
    sessionsPerKey: envLimit('MT_MCP_SESSIONS_PER_KEY', 20),
    ...overrides,
  };
}

/** The default largest document a knowledge base takes: 20 MiB. */
export const DEFAULT_KB_DOCUMENT_LIMIT = 20 * 1024 * 1024;

/** The default budget of reading one knowledge-base document: 30 s, 512 MiB, 2000 pages, 20 million characters. */
export const DEFAULT_KB_EXTRACT_BUDGET: ExtractBudget = {
  timeoutMs: 30_000,
  memoryMb: 512,
  pages: 2000,
  textChars: 20_000_000,
};

/**
 * `MT_KB_EXTRACT_TIMEOUT` (seconds), `MT_KB_EXTRACT_MEMORY` (MiB), `MT_KB_EXTRACT_PAGES` and `MT_KB_EXTRACT_TEXT`
 * (characters): what reading one knowledge-base document may take, with `overrides` (tests) taking precedence.
 */
export function knowledgeExtractBudgetFromEnv(overrides: Partial<ExtractBudget> = {}): ExtractBudget {
  const d = DEFAULT_KB_EXTRACT_BUDGET;
  return {
    timeoutMs: overrides.timeoutMs ?? envSeconds('MT_KB_EXTRACT_TIMEOUT') ?? d.timeoutMs,
    memoryMb: overrides.memoryMb ?? envLimit('MT_KB_EXTRACT_MEMORY', d.memoryMb, 16),
    pages: overrides.pages ?? envLimit('MT_KB_EXTRACT_PAGES', d.pages),
    textChars: overrides.textChars ?? envLimit('MT_KB_EXTRACT_TEXT', d.textChars),
  };
}

/** `MT_KB_DOCUMENT_LIMIT`: the largest document a knowledge base takes, in bytes (default 20 MiB). */
export function knowledgeDocumentLimitFromEnv(): number {
  return envLimit('MT_KB_DOCUMENT_LIMIT', DEFAULT_KB_DOCUMENT_LIMIT);
}

// The names proxy-addr (fastify's trustProxy) knows for address ranges.
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isProxyAddress(entry: string): boolean {
  if (PROXY_RANGE_NAMES.has(entry)) return true;
  const [address, bits, extra] = entry.split('/');
  if (extra !== undefined || address === undefined || isIP(address) === 0) return false;
  if (bits === undefined) return true;
  const max = isIP(address) === 4 ? 32 : 128;
  return /^[0-9]{1,3}$/.test(bits) ? Number(bits) <= max : isIP(bits) === 4 && max === 32;
}

/**
 * `MT_TRUST_PROXY`: which peers are reverse proxies whose `X-Forwarded-For` names the client (fastify's
 * `trustProxy`): unset or `false` trusts none (the peer's address is the client's, and the header is ignored), `true`
 * every peer, else a comma-separated list of addresses, CIDR ranges and `loopback`, `linklocal`, `uniquelocal`. A hop
 * count is refused: fastify trusts no peer for one (its fail-closed rule), which would silently ignore the setting.
 */
export function trustProxyFromEnv(): boolean | string[] {
  const raw = process.env.MT_TRUST_PROXY?.trim() ?? '';
  if (raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  const refuse = (reason: string) => serverErrors.create('api:server:trust-proxy-invalid', { value: raw, reason });
  if (/^[0-9]+$/.test(raw)) {
    throw refuse("a hop count is not accepted (fastify trusts no peer for one); name the proxies' addresses");
  }
  const entries = raw.split(',').map((entry) => entry.trim());
  const bad = entries.find((entry) => !isProxyAddress(entry));
  if (bad !== undefined) {
    throw refuse(
      `${bad === '' ? 'an empty entry' : bad} is not an IP address, a CIDR range or loopback, linklocal, uniquelocal`,
    );
  }
  return entries;
}

/** The default retention of ended runs and answered approvals: 30 days. */
export const DEFAULT_RETENTION_DAYS = 30;

/**
 * `MT_RETENTION_DAYS`: how many days ended runs (with their events, approvals and child runs) and answered approvals
 * are kept (default 30; may be fractional); `0` or `off` keeps them forever (docs/operations.md, "Data lifecycle").
 * Undefined: no retention job.
 */
/** `MT_TRIGGER_CHAINING`: whether this process runs the chaining loop of triggers (`off`: not; default on). */
export function triggerChainingFromEnv(): boolean {
  return process.env.MT_TRIGGER_CHAINING?.trim().toLowerCase() !== 'off';
}

export function retentionMsFromEnv(): number | undefined {
  const raw = process.env.MT_RETENTION_DAYS?.trim().toLowerCase();
  if (raw === undefined || raw === '') return DEFAULT_RETENTION_DAYS * 86_400_000;
  if (raw === 'off' || raw === '0') return undefined;
  const days = Number(raw);
  return Number.isFinite(days) && days > 0 ? days * 86_400_000 : DEFAULT_RETENTION_DAYS * 86_400_000;
}

/** The default retention of audit rows: 365 days. */
export const DEFAULT_AUDIT_RETENTION_DAYS = 365;

/**
 * `MT_AUDIT_RETENTION_DAYS`: how many days audit rows are kept (default 365; may be fractional); `0` or `off` keeps
 * them forever (docs/audit.md, "Retention"). Pruned by the retention job, apart from `MT_RETENTION_DAYS`.
 */
export function auditRetentionMsFromEnv(): number | undefined {
  const raw = process.env.MT_AUDIT_RETENTION_DAYS?.trim().toLowerCase();
  if (raw === undefined || raw === '') return DEFAULT_AUDIT_RETENTION_DAYS * 86_400_000;
  if (raw === 'off' || raw === '0') return undefined;
  const days = Number(raw);
  return Number.isFinite(days) && days > 0 ? days * 86_400_000 : DEFAULT_AUDIT_RETENTION_DAYS * 86_400_000;
}

/**
 * `MT_METRICS_PORT` and `MT_METRICS_HOST`: where this process serves Prometheus metrics at `GET /metrics`, apart from
 * the API (docs/operations.md, "Metrics"); undefined (the default) for no metrics. The host defaults to 127.0.0.1;
 * set 0.0.0.0 in a container so Prometheus can reach it. A value that is not a port is `api:metrics:port-invalid`.
 */
export function metricsListenFromEnv(): { port: number; host: string } | undefined {
  const raw = process.env.MT_METRICS_PORT?.trim();
  if (raw === undefined || raw === '') return undefined;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw serverErrors.create('api:metrics:port-invalid', { value: JSON.stringify(raw) });
  }
  return { port, host: envText('MT_METRICS_HOST') ?? '127.0.0.1' };
}

/** `MT_SHUTDOWN_GRACE_MS`'s default: a stopping process exits within 30 s of SIGTERM. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 30_000;
/** `MT_SHUTDOWN_UNREADY_MS`'s default: how long `mt serve` answers, unready, before it closes its listener. */
export const DEFAULT_SHUTDOWN_UNREADY_MS = 5_000;
/** `MT_WORKER_STUCK_MS`'s default: a worker whose every slot waits on a call older than this is unready. */
export const DEFAULT_WORKER_STUCK_MS = 60_000;

/**
 * `MT_SHUTDOWN_GRACE_MS` (default 30 s): a stopping `mt serve` or `mt worker` exits within this long of SIGTERM or
 * SIGINT; `MT_SHUTDOWN_UNREADY_MS` (default 5 s): how long `mt serve` keeps answering, readiness false, before it
 * closes its listener (docs/operations.md, "Shutdown"). A value that is not a whole number of ms keeps the default.
 */
export function shutdownSettingsFromEnv(): { graceMs: number; unreadyMs: number } {
  return {
    graceMs: envLimit('MT_SHUTDOWN_GRACE_MS', DEFAULT_SHUTDOWN_GRACE_MS),
    unreadyMs: envLimit('MT_SHUTDOWN_UNREADY_MS', DEFAULT_SHUTDOWN_UNREADY_MS, 0),
  };
}

/**
 * `MT_WORKER_HEALTH_PORT` and `MT_WORKER_HEALTH_HOST`: where `mt worker` answers `GET /health` (readiness) and
 * `GET /health/live` (liveness); undefined (the default) for no port. The host defaults to 127.0.0.1; set 0.0.0.0 in a
 * container so the kubelet can reach it. A value that is not a port is `api:health:port-invalid`.
 */
export function workerHealthListenFromEnv(): { port: number; host: string } | undefined {
  const raw = process.env.MT_WORKER_HEALTH_PORT?.trim();
  if (raw === undefined || raw === '') return undefined;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw serverErrors.create('api:health:port-invalid', { value: JSON.stringify(raw) });
  }
  return { port, host: envText('MT_WORKER_HEALTH_HOST') ?? '127.0.0.1' };
}

/** `MT_WORKER_STUCK_MS` (default 60 s): `mt worker` is unready while every slot waits on a call older than this. */
export function workerStuckMsFromEnv(): number {
  return envLimit('MT_WORKER_STUCK_MS', DEFAULT_WORKER_STUCK_MS);
}

/** The roles a person may be given through single sign-on: every key role but `runner` (a program's). */
export const PERSON_ROLES = ['admin', 'user', 'approver'] as const;
export type PersonRole = (typeof PERSON_ROLES)[number];

/** The default longest console session of a person: 12 hours, like an API key's. */
export const DEFAULT_OIDC_SESSION_SECONDS = 12 * 60 * 60;

/** Single sign-on for people through an OpenID Connect provider (docs/sso.md). */
export interface OidcSettings {
  /** The provider's issuer: its discovery document is `<issuer>/.well-known/openid-configuration`. */
  issuer: URL;
  clientId: string;
  /** None: a public client (PKCE alone, `token_endpoint_auth_method` none). */
  clientSecret?: string;
  /** `MT_PUBLIC_URL` + `/console/login/oidc/callback`. */
  redirectUri: string;
  /** `MT_PUBLIC_URL` + `/console/login`: where the provider's sign-out sends the person back. */
  postLogoutRedirectUri: string;
  scopes: string;
  /** The claim whose values map to roles (a dotted path into the claims, e.g. `realm_access.roles`). */
  rolesClaim: string;
  /** Claim value → namespace → role. */
  roles: Record<string, Record<string, PersonRole>>;
  /** What the sign-in button says: "Sign in with <name>". */
  providerName: string;
  /** The longest a person's console session lasts (also never past the ID token's expiry). */
  sessionMs: number;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Whether an http: issuer is allowed: only on this machine (a test's or a developer's provider). */
export function loopbackHost(url: URL): boolean {
  return LOOPBACK_HOSTS.has(url.hostname);
}

/**
 * `MT_OIDC_*`: single sign-on for people (docs/sso.md), undefined when `MT_OIDC_ISSUER` is unset. A setting that cannot
 * work refuses the start (`api:server:oidc-invalid`): a missing client id or `MT_PUBLIC_URL`, an http issuer that is
 * not on this machine, a `MT_OIDC_ROLES` that is not a map of claim values to namespaces to roles (admin, user or
 * approver).
 */
export function oidcSettingsFromEnv(publicUrl: string | undefined = publicUrlFromEnv()): OidcSettings | undefined {
  const issuerText = envText('MT_OIDC_ISSUER')?.trim();
  if (issuerText === undefined || issuerText === '') return undefined;
  const refuse = (reason: string) => serverErrors.create('api:server:oidc-invalid', { reason });
  let issuer: URL;
  try {
    issuer = new URL(issuerText);
  } catch {
    throw refuse(`MT_OIDC_ISSUER ${JSON.stringify(issuerText)} is not a URL`);
  }
  if (issuer.protocol !== 'https:' && !(issuer.protocol === 'http:' && loopbackHost(issuer))) {
    throw refuse('MT_OIDC_ISSUER must be an https URL (http only for a provider on 127.0.0.1 or localhost)');
  }
  const clientId = envText('MT_OIDC_CLIENT_ID')?.trim();
  if (!clientId) throw refuse('MT_OIDC_CLIENT_ID is not set');
  if (!publicUrl) throw refuse('MT_PUBLIC_URL is not set: the redirect address is made from it');
  let base: URL;
  try {
    base = new URL(publicUrl);
  } catch {
    throw refuse(`MT_PUBLIC_URL ${JSON.stringify(publicUrl)} is not a URL`);
  }
  const root = base.origin + base.pathname.replace(/\/+$/, '');
  const rolesText = envText('MT_OIDC_ROLES');
  if (rolesText === undefined) throw refuse('MT_OIDC_ROLES is not set: no person could be given a role');
  const roles = parseOidcRoles(rolesText, refuse);
  const sessionSeconds = envLimit('MT_OIDC_SESSION_SECONDS', DEFAULT_OIDC_SESSION_SECONDS, 60);
  return {
    issuer,
    clientId,
    ...(envText('MT_OIDC_CLIENT_SECRET') ? { clientSecret: envText('MT_OIDC_CLIENT_SECRET') } : {}),
    redirectUri: `${root}/console/login/oidc/callback`,
    postLogoutRedirectUri: `${root}/console/login`,
    scopes: envText('MT_OIDC_SCOPES')?.trim() || 'openid profile email',
    rolesClaim: envText('MT_OIDC_ROLES_CLAIM')?.trim() || 'groups',
    roles,
    providerName: envText('MT_OIDC_PROVIDER_NAME')?.trim() || issuer.host,
    sessionMs: sessionSeconds * 1000,
  };
}

function parseOidcRoles(text: string, refuse: (reason: string) => Error): Record<string, Record<string, PersonRole>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw refuse('MT_OIDC_ROLES is not JSON: it is an object of claim values, each an object of namespace: role');
  }
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(parsed)) throw refuse('MT_OIDC_ROLES is not an object of claim values');
  const roles: Record<string, Record<string, PersonRole>> = {};
  for (const [value, namespaces] of Object.entries(parsed)) {
    if (!isObject(namespaces)) {
      throw refuse(`MT_OIDC_ROLES[${JSON.stringify(value)}] is not an object of namespace: role`);
    }
    roles[value] = {};
    for (const [namespace, role] of Object.entries(namespaces)) {
      if (!PERSON_ROLES.includes(role as PersonRole)) {
        throw refuse(
          `MT_OIDC_ROLES[${JSON.stringify(value)}][${JSON.stringify(namespace)}] is ${JSON.stringify(role)}; ` +
            `a person's role is ${PERSON_ROLES.join(', ')} (runner is for programs' keys)`,
        );
      }
      roles[value][namespace] = role as PersonRole;
    }
  }
  return roles;
}

/** How outbound webhooks are delivered (docs/notifications.md): the settings of the delivery loop. */
export interface WebhookSettings {
  /** Deliveries this process sends at once; 0: this process sends none (`MT_WEBHOOK_CONCURRENCY`, default 8). */
  concurrency: number;
  /** The deadline of one attempt, connect to the end of the answer (`MT_WEBHOOK_TIMEOUT_MS`, default 10000). */
  timeoutMs: number;
  /** Attempts before a delivery is Failed (`MT_WEBHOOK_MAX_ATTEMPTS`, default 10). */
  maxAttempts: number;
  /** The wait after the first failed attempt, doubled after each (`MT_WEBHOOK_RETRY_BASE_MS`, default 5000). */
  retryBaseMs: number;
  /** The longest wait between two attempts (`MT_WEBHOOK_RETRY_MAX_MS`, default 3600000: one hour). */
  retryMaxMs: number;
}

/** The webhook delivery settings from `MT_WEBHOOK_*` (unset or unusable: the defaults). */
export function webhookSettingsFromEnv(overrides: Partial<WebhookSettings> = {}): WebhookSettings {
  return {
    concurrency: envLimit('MT_WEBHOOK_CONCURRENCY', 8, 0),
    timeoutMs: envLimit('MT_WEBHOOK_TIMEOUT_MS', 10_000),
    maxAttempts: envLimit('MT_WEBHOOK_MAX_ATTEMPTS', 10),
    retryBaseMs: envLimit('MT_WEBHOOK_RETRY_BASE_MS', 5000),
    retryMaxMs: envLimit('MT_WEBHOOK_RETRY_MAX_MS', 3_600_000),
    ...overrides,
  };
}
