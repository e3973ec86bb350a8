import { type MtError, isMtError } from '@maitento/errors';
import type pg from 'pg';
import { parse, toClientConfig } from 'pg-connection-string';
import { storeErrors } from '../errors.js';

// How every connection to PostgreSQL is configured: the store's pool, the wake-up LISTEN connection and the job
// queue's. One place reads `sslmode`, `sslrootcert`, PGSSLMODE, PGSSLROOTCERT and MT_DB_POOL_MAX, and turns a
// refused TLS handshake into `api:store:tls` naming the certificate problem (docs/operations.md, "TLS to PostgreSQL").

/** Most connections of the store's pool when `MT_DB_POOL_MAX` is unset. */
export const DEFAULT_DB_POOL_MAX = 10;

/** `MT_DB_POOL_MAX` of `env` when it is a whole number ≥ 1, else {@link DEFAULT_DB_POOL_MAX}. */
export function dbPoolMaxFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.MT_DB_POOL_MAX?.trim();
  const value = raw === undefined || raw === '' ? Number.NaN : Number(raw);
  return Number.isInteger(value) && value >= 1 ? value : DEFAULT_DB_POOL_MAX;
}

/** The `sslmode` values libpq knows. */
const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** A `pg` Client/Pool configuration, and the `sslmode` it was made from (for the errors). */
export interface PgConnectionConfig {
  config: pg.ClientConfig;
  sslmode: SslMode | undefined;
}

function tlsConfigError(reason: string, cause?: unknown): MtError {
  return storeErrors.create('api:store:tls-config', { reason }, cause === undefined ? undefined : { cause });
}

/**
 * The `pg` configuration of `connectionString` with libpq's meaning of `sslmode`: `disable` and `allow` no TLS
 * (node-postgres cannot fall back from one to the other), `prefer` and `require` TLS without verifying the
 * certificate (`require` with a root certificate verifies the chain, as libpq does), `verify-ca` the chain only,
 * `verify-full` the chain and the host name. `sslrootcert` (or PGSSLROOTCERT) names the CA file; `system` means the
 * system's CAs (and implies `verify-full`). PGSSLMODE applies when the URL has no `sslmode`. Throws
 * `api:store:tls-config` for a value that cannot be used; the message never holds the URL (it may hold a password).
 */
export function pgConnectionConfig(
  connectionString: string,
  applicationName?: string,
  env: NodeJS.ProcessEnv = process.env,
): PgConnectionConfig {
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch {
    // Not a URL (a key=value string or a socket path): node-postgres reads it as it is, without TLS options.
    return {
      config: { connectionString, ...(applicationName ? { application_name: applicationName } : {}) },
      sslmode: undefined,
    };
  }
  const params = url.searchParams;
  const mode = params.get('sslmode') ?? (env.PGSSLMODE || undefined);
  if (mode !== undefined && !(SSL_MODES as readonly string[]).includes(mode)) {
    throw tlsConfigError(`sslmode=${mode} is not one of ${SSL_MODES.join(', ')}`);
  }
  const sslmode = mode as SslMode | undefined;
  if (sslmode !== undefined) params.set('sslmode', sslmode === 'allow' ? 'disable' : sslmode);
  const rootcert = params.get('sslrootcert') ?? (env.PGSSLROOTCERT || undefined);
  params.delete('sslrootcert');
  if (rootcert === 'system') {
    if (sslmode !== undefined && sslmode !== 'verify-full') {
      throw tlsConfigError(`sslrootcert=system requires sslmode=verify-full (it is ${sslmode})`);
    }
    // The system's CAs are Node's default ones: verify-full without a CA of its own.
    params.set('sslmode', 'verify-full');
  } else if (rootcert !== undefined && sslmode !== undefined && sslmode !== 'disable' && sslmode !== 'allow') {
    params.set('sslrootcert', rootcert);
  } else if (sslmode === 'verify-ca') {
    throw tlsConfigError(
      'sslmode=verify-ca needs the CA that signed the server certificate: set sslrootcert or PGSSLROOTCERT',
    );
  }
  let parsed: ReturnType<typeof parse>;
  try {
    // pg-connection-string's libpq mode: require → no verification (with a root certificate: the chain, as
    // verify-ca), verify-ca → the chain, verify-full → the chain and the host name; it reads the root certificate.
    parsed = parse(url.toString(), { useLibpqCompat: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw tlsConfigError(
      code === undefined
        ? (error as Error).message
        : `the root certificate file ${rootcert} cannot be read (${(error as Error).message})`,
      error,
    );
  }
  const config = toClientConfig(parsed);
  // Without sslmode no TLS, whatever pg's own reading of PGSSLMODE would make of it.
  if (config.ssl === undefined) config.ssl = false;
  if (applicationName && parsed.application_name === undefined) config.application_name = applicationName;
  return { config, sslmode };
}

/** What Node's TLS error codes mean, in the words of the message. */
const CERTIFICATE_PROBLEMS: Record<string, string> = {
  SELF_SIGNED_CERT_IN_CHAIN: 'self-signed certificate in chain (its CA is not among the trusted ones)',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed certificate (not signed by a trusted CA)',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'certificate not signed by a trusted CA',
  UNABLE_TO_GET_ISSUER_CERT: 'certificate not signed by a trusted CA',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'certificate not signed by a trusted CA',
  CERT_SIGNATURE_FAILURE: 'certificate signature does not verify',
  CERT_HAS_EXPIRED: 'certificate expired',
  CERT_NOT_YET_VALID: 'certificate not yet valid',
  CERT_UNTRUSTED: 'certificate not trusted',
  CERT_REJECTED: 'certificate rejected',
};

/**
 * `api:store:tls` naming the problem when `error` is a refused TLS handshake with PostgreSQL (an untrusted or
 * expired certificate, a host name it does not name, a server without TLS), else undefined. An `api:store:tls`
 * error is given back as it is.
 */
export function tlsRefusal(error: unknown, sslmode: SslMode | undefined): MtError | undefined {
  if (isMtError(error)) return error.code === 'api:store:tls' ? error : undefined;
  if (!(error instanceof Error)) return undefined;
  const code = (error as NodeJS.ErrnoException).code ?? '';
  let reason: string | undefined;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    reason = `host name mismatch: ${(error as Error & { reason?: string }).reason ?? error.message}`;
  } else if (code in CERTIFICATE_PROBLEMS) {
    reason = CERTIFICATE_PROBLEMS[code];
  } else if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_')) {
    reason = error.message;
  } else if (error.message === 'The server does not support SSL connections') {
    reason = 'the server does not accept TLS connections';
  }
  if (reason === undefined) return undefined;
  return storeErrors.create('api:store:tls', { reason, sslmode: sslmode ?? 'unset' }, { cause: error });
}
