export { defineErrors, ErrorRegistry, renderTemplate } from './registry/define.js';
export type { ErrorParams, ErrorSpec } from './registry/define.js';
export { isMtError, MtError } from './registry/mt-error.js';
export type { ErrorBody } from './registry/mt-error.js';
export { type SharedErrorCode, sharedErrors } from './registry/shared.js';
