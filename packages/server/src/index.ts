export { serverErrors } from './errors.js';
export { createServer } from './server/create-server.js';
export type { ServerOptions } from './server/create-server.js';
export { startServer } from './server/start-server.js';
export type { RunningServer, StartServerOptions } from './server/start-server.js';
export { REDACTED_PATHS } from './internal/logging.js';
export type { RouteRole } from './internal/context.js';
