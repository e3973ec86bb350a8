import type { FastifyServerOptions } from 'fastify';
import { logLevelFromEnv } from '../server/settings.js';

/** Log paths censored in every log line: the API key header and any secret value. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'body.value',
  'req.body.value',
  'value',
  '*.value',
];

/** Builds fastify's logger option with redaction always on; `false` turns logging off. */
export function loggerOptions(logger: FastifyServerOptions['logger'] | undefined): FastifyServerOptions['logger'] {
  if (logger === false) return false;
  const base = typeof logger === 'object' && logger !== null ? logger : {};
  return {
    level: logLevelFromEnv(),
    ...base,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  } as FastifyServerOptions['logger'];
}
