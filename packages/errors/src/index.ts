export { defineErrors, ErrorRegistry, renderTemplate } from './registry/define.js';
export type { ErrorParams, ErrorSpec } from './registry/define.js';
export { isMtError, MT_ERROR_MARK, MtError } from './registry/mt-error.js';
export type { ErrorBody } from './registry/mt-error.js';
export { type SharedErrorCode, sharedErrors } from './registry/shared.js';
