export type * from './api/types.js';
export type { Engine } from './api/engine.js';
export { TERMINAL_STATUSES } from './api/types.js';
