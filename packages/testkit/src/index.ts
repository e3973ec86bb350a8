export { createTestDatabase, TEST_SERVER_URL } from './database.js';
export type { TestDatabase } from './database.js';
export { selfSignedCertificate } from './tls.js';
