import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest, FastifyServerOptions } from 'fastify';
import { pino } from 'pino';
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

/** The header a request's id comes in and goes back in. */
export const REQUEST_ID_HEADER = 'x-request-id';
/** What an incoming request id may be: what proxies and tracing tools send (UUIDs, hex, base64url), nothing to forge log lines with. */
const REQUEST_ID = /^[A-Za-z0-9._:=+/-]{1,128}$/;

/**
 * fastify's `genReqId`: the request's id is the caller's `X-Request-Id` (a load balancer's, a client's) when it is one
 * (at most 128 characters of letters, digits and `._:=+/-`), else a random UUID: unique across processes and restarts,
 * unlike fastify's per-process counter. Every log line of the request carries it as `reqId`.
 */
export function requestId(request: IncomingMessage): string {
  const given = request.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/** Sends every request's id back in `X-Request-Id`, so a client can quote it and an operator find its log lines. */
export function echoRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}

/** A process's log outside a request: `mt worker`'s, with the shape of `mt serve`'s (docs/operations.md, "Logs"). */
export interface ProcessLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/**
 * The log of a process without fastify (`mt worker`): pino with the options of `mt serve`'s logger (level from
 * `MT_LOG_LEVEL`, the same redaction), so every log line of every process is one JSON object with `level`, `time`,
 * `pid`, `hostname` and `msg`. Lines go to `write` (`mt worker`: stderr, as `mt serve`'s).
 */
export function processLogger(write: (line: string) => void): ProcessLogger {
  return pino(loggerOptions(undefined) as Parameters<typeof pino>[0], { write });
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

  /** Adds bindings to every later line of the request (to the child still to be made, when none was needed yet). */
  addBindings(bindings: Bindings): void {
    if (this.#child === undefined) Object.assign(this.#bindings, bindings);
    else this.#child = this.#child.child(bindings) as Pino;
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

/** Adds `bindings` to every later line of `request`'s log (`runId` on a request about a run). */
export function bindRequestLog(request: FastifyRequest, bindings: Bindings): void {
  const log = request.log as FastifyBaseLogger & { addBindings?: (b: Bindings) => void };
  if (typeof log.addBindings === 'function') log.addBindings(bindings);
  else request.log = log.child(bindings);
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
