export type { Db, Queryable, QueryOptions, QueryResult } from './db/db.js';
export { type CommitOutcome, createPgDb, directUrlFromEnv, preparedFromEnv, serverDeadlines } from './db/pg-db.js';
export { DEFAULT_DB_POOL_MAX, dbPoolMaxFromEnv, pgConnectionConfig, tlsRefusal } from './db/pg-config.js';
export type { PgConnectionConfig, SslMode } from './db/pg-config.js';
export { createPgliteDb } from './db/pglite-db.js';
export { DEFAULT_DATA_DIR, openDatabase } from './db/open.js';
export type { OpenDatabaseOptions } from './db/open.js';
export { storeErrors } from './errors.js';
export { checkSchema, loadMigrations, migrate, schemaStatus } from './migrations/migrate.js';
export type { Migration, SchemaStatus } from './migrations/migrate.js';
export { grantRuntimeRole, QUEUE_SCHEMA, runtimeGrantStatements } from './migrations/grants.js';
export { createNamespace, DEFAULT_NAMESPACE, findNamespace } from './namespaces/namespaces.js';
export type { Namespace } from './namespaces/namespaces.js';
export { bootstrap } from './namespaces/bootstrap.js';
export type { BootstrapResult } from './namespaces/bootstrap.js';
export {
  apiKeyDeleted,
  authenticateApiKey,
  createApiKey,
  deleteApiKey,
  existingApiKeys,
  generateApiKey,
  listApiKeys,
} from './keys/keys.js';
export { isUuid } from './internal/uuid.js';
export { secretAccess } from './keys/secret-access.js';
export type { ApiKeyInfo, CreatedApiKey, KeyIdentity, KeyRole } from './keys/keys.js';
export {
  isPlatformToken,
  issuePlatformToken,
  PLATFORM_TOKEN_TTL_MS,
  verifyPlatformToken,
} from './keys/platform-tokens.js';
export {
  createSecret,
  deleteSecret,
  listSecrets,
  readSecretValue,
  rotateSecret,
  secretNames,
} from './secrets/secrets.js';
export type { SecretInfo } from './secrets/secrets.js';
export {
  bindIdempotentAnswer,
  bindIdempotentEffect,
  claimIdempotencyKey,
  completeIdempotencyKey,
  IDEMPOTENCY_LEASE_SECONDS,
  IDEMPOTENCY_TTL_HOURS,
  releaseIdempotencyKey,
  renewIdempotencyKey,
  withIdempotencyKey,
} from './idempotency/idempotency.js';
export type {
  HeldIdempotencyKey,
  IdempotencyClaim,
  IdempotencyScope,
  IdempotentEffect,
  StoredAnswer,
} from './idempotency/idempotency.js';
export { parseSecretKey, resolveSecretKey } from './secrets/secret-key.js';
export { allKeys, createKeyring, currentKey, masterKeyId, toKeyring } from './secrets/keyring.js';
export type { MasterKey, SecretKeyring, SecretKeys } from './secrets/keyring.js';
export { checkSecretKeys, rotateSecretKeys, secretKeyStatus } from './secrets/key-rotation.js';
export type { SecretKeyCheck, SecretKeyRotation } from './secrets/key-rotation.js';
export type { ResolvedSecretKey } from './secrets/secret-key.js';
export { canonicalJson, contentHash } from './resources/hash.js';
export type { Pin } from './resources/hash.js';
export {
  getAnyVersion,
  getVersion,
  listResources,
  listTools,
  listVersions,
  nameSuggestion,
  setVersionEnabled,
} from './resources/versions.js';
export type {
  NotFoundError,
  ResourceOf,
  ResourceSummary,
  StoredVersion,
  ToolSummary,
  VersionedKind,
  VersionSummary,
} from './resources/versions.js';
export { loadCallableTool } from './resources/tool-call.js';
export type { CallableTool } from './resources/tool-call.js';
export {
  CACHE_ACK_TOPIC,
  CACHE_TOPIC,
  type CacheLease,
  type CacheLeaseOptions,
  type CacheLeaseState,
  noCacheLease,
  IDLE_REASON,
  startCacheLease,
} from './cache/lease.js';
export { createStoreCache } from './cache/store-cache.js';
export type { SecretValue, StoreCache, StoreCacheOptions } from './cache/store-cache.js';
export { applyDeploy, deploy, planDeploy } from './deploy/deploy.js';
export type { CompiledResources, DeployChange, DeployPlan } from './deploy/deploy.js';
export { diffToolDefinitions } from './deploy/tool-diff.js';
export type { ChangeSummary } from './deploy/tool-diff.js';
export {
  appendRunEvents,
  cancelRequested,
  anyRunRunning,
  claimRun,
  findRun,
  idleConversations,
  insertRun,
  listRunEvents,
  listRunSummaries,
  RESULT_SUMMARY_CHARS,
  RUN_STATUSES,
  runExists,
  requestCancel,
  TERMINAL_RUN_STATUSES,
} from './runs/runs.js';
export type {
  NewRunEvent,
  RunEventRecord,
  RunAppend,
  RunFence,
  RunRecord,
  RunStatus,
  RunStatusChange,
  RunSummaryRecord,
} from './runs/runs.js';
export {
  answerApprovalRecord,
  expireApprovals,
  findApproval,
  findUnusedCallApproval,
  insertApproval,
  listApprovalRecords,
  runApprovals,
  treeApprovals,
  consumeApproval,
  markApprovalDelivered,
} from './runs/approvals.js';
export type { ApprovalPolicy, ApprovalRecord } from './runs/approvals.js';
export {
  findChildRun,
  followDescendant,
  lockRunLine,
  openChildren,
  openDescendants,
  runTree,
  treeStartedBy,
} from './runs/children.js';
export { notifyWake, WAKE_CHANNEL, wakeTopics } from './wake/notify.js';
export { openWakeups } from './wake/wakeups.js';
export type { WakeLogger, Wakeups, WakeupsOptions } from './wake/wakeups.js';
export { fileErrors } from './files/errors.js';
export {
  createFileSystem,
  DEFAULT_FILE_LIMITS,
  deleteFile,
  deleteFileSystem,
  etagOf,
  getFile,
  getFileSystem,
  listFiles,
  listFileSystems,
  MAX_PATH_BYTES,
  moveFile,
  normalizeFilePath,
  putFile,
} from './files/file-systems.js';
export type {
  FileInfo,
  FileLimits,
  FilePage,
  FileSystemInfo,
  StoredFile,
  WriteCondition,
} from './files/file-systems.js';
export {
  createKnowledgeBase,
  DEFAULT_KB_LANGUAGE,
  deleteKnowledgeBase,
  getKnowledgeBase,
  listKnowledgeBases,
} from './knowledge/knowledge-bases.js';
export type { KnowledgeBase } from './knowledge/knowledge-bases.js';
export { deleteDocument, getDocument, listDocuments, putDocument } from './knowledge/documents.js';
export type { KnowledgeDocument, NewChunk } from './knowledge/documents.js';
export { searchKnowledgeBase } from './knowledge/search.js';
export type { KnowledgeSearchResult } from './knowledge/search.js';
export { chunksToEmbed, hasEmbeddings, hybridSearchKnowledgeBase, storeEmbeddings } from './knowledge/embeddings.js';
export type { ChunkToEmbed } from './knowledge/embeddings.js';
export {
  chooseVectorSearch,
  detectVectorSupport,
  exactVectorSearch,
  pgvectorSearch,
  pgvectorSql,
} from './knowledge/vector-search.js';
export type { VectorHit, VectorSearch, VectorSearchKind, VectorSupport } from './knowledge/vector-search.js';
export { PRUNE_BATCH_SIZE, pruneBefore, RETENTION_INTERVAL_MS, startRetention } from './runs/prune.js';
export type { PruneOptions, PruneResult, Retention, RetentionOptions } from './runs/prune.js';
export * from './timers.js';
export { nextSweepDueMs } from './runs/sweep.js';
export { AUDIT_MAX_PAGE, AUDIT_PAGE, listAudit, recordAudit } from './audit/audit.js';
export type {
  AuditAction,
  AuditActor,
  AuditContext,
  AuditEntry,
  AuditPage,
  AuditQuery,
  AuditRecord,
} from './audit/audit.js';
