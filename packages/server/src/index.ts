export { serverErrors } from './errors.js';
export { createServer } from './server/create-server.js';
export type { ServerOptions } from './server/create-server.js';
export { startServer } from './server/start-server.js';
export type { RunningServer, StartServerOptions } from './server/start-server.js';
export { startWorker } from './server/start-worker.js';
export type { RunningWorker, StartWorkerOptions } from './server/start-worker.js';
export { REDACTED_PATHS } from './internal/logging.js';
export type { RouteRole } from './internal/context.js';
