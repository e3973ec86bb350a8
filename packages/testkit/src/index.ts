export { createTestDatabase, MIGRATED_TEMPLATE_ENV, TEST_SERVER_URL } from './database.js';
export type { TestDatabase, TestDatabaseOptions } from './database.js';
export { createFakeAnthropic, createFakeOpenAI } from './fake-models.js';
export type {
  FakeAnswer,
  FakeFailure,
  FakeModelConversation,
  FakeModelOptions,
  FakeModelProvider,
  FakeModelRequest,
  FakeModelSeenToolCall,
  FakeModelServer,
  FakeModelTool,
  FakeModelToolResult,
  FakeStep,
  FakeToolCall,
  FakeTurn,
} from './fake-models.js';
export { type OrdersRepoOptions, ordersRepo, type RepoFile, refundDeskRepo, refundTurn } from './orders-repo.js';
export { copyPgliteTemplate, pgliteTemplate } from './pglite-template.js';
export { databaseDrivers } from './database-drivers.js';
export type { OpenedDatabase } from './database-drivers.js';
export { selfSignedCertificate } from './tls.js';
export { startTcpProxy } from './tcp-proxy.js';
export type { TcpProxy } from './tcp-proxy.js';
export { startRecordingUpstream } from './upstream.js';
export type { Upstream, UpstreamHandler, UpstreamOptions, UpstreamRequest } from './upstream.js';
export { fakeEmbedding, startFakeEmbeddings } from './fake-embeddings.js';
export type { FakeEmbeddings } from './fake-embeddings.js';
export { certificateChain } from './tls.js';
export type { CertificateChain } from './tls.js';
export { freePort } from './free-port.js';
export { startPostgresServer } from './postgres-server.js';
export type { PostgresServer, PostgresServerOptions } from './postgres-server.js';
export { holdLock } from './lock-holder.js';
export type { HeldLock } from './lock-holder.js';
export { startPgBouncer } from './pgbouncer.js';
export type { PgBouncer, PgBouncerOptions } from './pgbouncer.js';
export { waitFor } from './wait.js';
export type { WaitForOptions } from './wait.js';
export { scriptedModels } from './scripted-models.js';
export type { ScriptedModels } from './scripted-models.js';
