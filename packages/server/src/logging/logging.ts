import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
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

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type Bindings = Record<string, unknown>;
type ChildLoggerOptions = Parameters<FastifyBaseLogger['child']>[1];
/** pino, which fastify's logger is whenever logging is on. */
type Pino = FastifyBaseLogger & { isLevelEnabled(level: string): boolean; bindings(): Bindings };

/**
 * A request's logger, made only when the request writes a line: fastify makes a pino child (its `reqId` binding
 * serialized, the redaction wired in) for every request, and at the default level a healthy call writes none (about
 * 2% of `mt serve`'s CPU a call, docs/performance.md at 3251c0c). A method whose level is off does nothing, as pino's would; any
 * other use makes the same child fastify would have made, once, and hands on to it.
 */
class RequestLogger {
  #child: Pino | undefined;
  readonly #parent: Pino;
  readonly #bindings: Bindings;

  constructor(parent: Pino, bindings: Bindings) {
    this.#parent = parent;
    this.#bindings = bindings;
  }

  #real(): Pino {
    this.#child ??= this.#parent.child(this.#bindings) as Pino;
    return this.#child;
  }

  #write(level: Level, args: unknown[]): void {
    const logger = this.#child ?? this.#parent;
    if (!logger.isLevelEnabled(level)) return;
    (this.#real()[level] as (...a: unknown[]) => void)(...args);
  }

  get level(): string {
    return (this.#child ?? this.#parent).level;
  }

  set level(level: string) {
    this.#real().level = level;
  }

  isLevelEnabled(level: string): boolean {
    return (this.#child ?? this.#parent).isLevelEnabled(level);
  }

  fatal(...args: unknown[]): void {
    this.#write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#write('error', args);
  }
  warn(...args: unknown[]): void {
    this.#write('warn', args);
  }
  info(...args: unknown[]): void {
    this.#write('info', args);
  }
  debug(...args: unknown[]): void {
    this.#write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#write('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }

  bindings(): Bindings {
    return this.#real().bindings();
  }
}

/**
 * fastify's `childLoggerFactory`: a {@link RequestLogger} for a request, or pino's child at once when the route asks
 * for options of its own (a route's `logLevel`, serializers).
 */
export function requestLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  const pino = logger as Partial<Pino>;
  if (typeof pino.isLevelEnabled !== 'function' || (options !== undefined && Object.keys(options).length > 0)) {
    return logger.child(bindings, options);
  }
  return new RequestLogger(logger as Pino, bindings) as unknown as FastifyBaseLogger;
}
