/** The logging the engine does (pino's and Fastify's loggers fit). */
export interface EngineLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** A logger that drops everything. */
export const silentLogger: EngineLogger = { info() {}, warn() {}, error() {} };
