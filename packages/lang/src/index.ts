export type * from './syntax/ast.js';
export type * from './diagnostics/diagnostic.js';
export type * from './config/resources.js';
