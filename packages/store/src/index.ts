export type { Db, Queryable, QueryOptions, QueryResult } from './db/db.js';
export { RELAXED_POOL_MAX } from './db/db.js';
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
  CONNECT_LINK_TTL_MS,
  createConnectLink,
  expiredAuthorizationWaits,
  deleteConnection,
  findConnectionForCall,
  getConnection,
  listConnections,
  pendingAuthorizations,
  readConnectionTokens,
  REFRESH_BUSY,
  refreshConnection,
  reserveConnection,
  runsAwaitingConnection,
  saveConnection,
  stateHash,
  useConnectLink,
} from './connections/connections.js';
export type {
  ConnectionForCall,
  ConnectionTokens,
  NewConnectLink,
  RefreshOutcome,
  UsedConnectLink,
} from './connections/connections.js';
export { deleteOAuthClient, findOAuthClient, registerOAuthClientOnce } from './connections/oauth-clients.js';
export type { OAuthClientKey, RegisteredOAuthClient, StoredOAuthClient } from './connections/oauth-clients.js';
export {
  claimWebhookDeliveries,
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  enqueueWebhookTest,
  finishWebhookDelivery,
  getWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  newWebhookSecret,
  nextWebhookDue,
  rotateWebhookSecret,
  updateWebhookEndpoint,
  webhookMessageId,
} from './webhooks/webhooks.js';
export type { ClaimedDelivery, WebhookDelivery, WebhookEndpoint } from './webhooks/webhooks.js';
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
  DELETED_HASH,
  getAnyVersion,
  getVersion,
  listResources,
  listTools,
  listVersions,
  nameSuggestion,
  notFound as versionNotFound,
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
export { activePins, deleteResource } from './resources/delete.js';
export type { ActivePins, ResourceDeletion } from './resources/delete.js';
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
export { describeChange } from './deploy/describe.js';
export { diffToolDefinitions } from './deploy/tool-diff.js';
export type { ChangeSummary } from './deploy/tool-diff.js';
export {
  appendRunEvents,
  cancelRequested,
  anyRunRunning,
  claimRun,
  findRun,
  dueLimitWaits,
  idleConversations,
  insertRun,
  listRunEvents,
  listRunSummaries,
  RESULT_SUMMARY_CHARS,
  RUN_STATUSES,
  runExists,
  requestCancel,
  RUN_WATCH_SECONDS,
  setRunBudget,
  spent,
  TERMINAL_RUN_STATUSES,
  watchRun,
} from './runs/runs.js';
export { overviewCharts, runsOverview, WAITING_STATUSES } from './runs/overview.js';
export type { OverviewCharts, RunsOverview } from './runs/overview.js';
export type {
  NewRunEvent,
  RunEventRecord,
  RunAppend,
  RunBudget,
  RunFence,
  RunRecord,
  RunStatus,
  RunStatusChange,
  RunSummaryRecord,
  RunUsage,
} from './runs/runs.js';
export {
  answerApprovalRecord,
  editApprovalRecord,
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
  treeSpend,
  treeStartedBy,
} from './runs/children.js';
export type { TreeSpendRun } from './runs/children.js';
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
export {
  PRUNE_BATCH_MS,
  PRUNE_BATCH_SIZE,
  PRUNE_FIRST_BATCH_SIZE,
  PRUNE_MIN_BATCH_SIZE,
  pruneBefore,
  RETENTION_INTERVAL_MS,
  startRetention,
} from './runs/prune.js';
export type { PruneOptions, PruneResult, Retention, RetentionOptions } from './runs/prune.js';
export * from './timers.js';
export {
  admitRunUnderQuotas,
  getNamespaceQuotas,
  quotaStanding,
  setNamespaceQuotas,
  TOOL_CALL_QUOTA_CODE,
  tokenQuotaRefusal,
  toolCallQuotaRefusal,
} from './usage/quotas.js';
export type { NamespaceQuotas, QuotaStanding } from './usage/quotas.js';
export { usageFigures } from './usage/usage.js';
export type { UsageGroup, UsageGrouping } from './usage/usage.js';
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
export {
  failQueuedTick,
  listScheduleTicks,
  queuedTicks,
  recordTicks,
  scheduleQueued,
  scheduleRunActive,
  setSchedulePaused,
  takeQueuedTick,
  tickingSchedules,
} from './schedules/schedules.js';
export type { TickingSchedule, TickRow } from './schedules/schedules.js';
export {
  claimChainDelivery,
  countTriggerRejection,
  findDelivery,
  latestTrigger,
  listDeliveries,
  pendingChainDeliveries,
  recordDelivery,
  refuseChainDelivery,
  triggerRejections,
} from './triggers/triggers.js';
export type { PendingChainDelivery, TriggerDelivery } from './triggers/triggers.js';
export {
  type AllowanceOptions,
  createLimiter,
  type Limiter,
  type LimitDecision,
  type LimitRequest,
  type LimitSpec,
} from './limits/limiter.js';
