export * from './client-entry.js';
export * from './wire/schemas.js';
export * from './wire/access.js';
export * from './wire/records.js';
export * from './wire/requests.js';
export * from './wire/files.js';
export * from './wire/audit.js';
export * from './wire/knowledge.js';
