export { RUN_STATUSES, TERMINAL_RUN_STATUSES as TERMINAL_STATUSES } from '@maitento/store';
export type { EmbeddingModel } from 'ai';
export type { Engine, RunningEngine, StartContext, WorkerHealth } from './api/engine.js';
export type { RunOrigin } from './journal/events.js';
export { RUN_EVENTS_MAX_PAGE, RUN_EVENTS_PAGE, StartDeclined } from './api/engine.js';
export type * from './api/types.js';
export {
  ANSWERING_ROLES,
  answerRefusal,
  answerRoleRefusal,
  approvalNow,
  approvedCallUse,
  type ActingCheck,
} from './approvals/acting.js';
export { opsMetrics, TOOL_CALL_BUCKETS } from './telemetry/ops-metrics.js';
export type { EndedStatus, OpsMetrics } from './telemetry/ops-metrics.js';
export type { EngineOptions } from './engine/create-engine.js';
export { createEngine, DEFAULT_DRAIN_MS, runWorker, startTelemetry } from './engine/create-engine.js';
export { approvalTtlMsFromEnv } from './engine/settings.js';
export type { EngineErrorCode } from './errors.js';
export { engineErrors } from './errors.js';
export { FETCH_POLL_MS, HEARTBEAT_SECONDS } from './worker/queue.js';
export { checkRunQueueSchema, migrateRunQueueSchema } from './worker/queue-schema.js';
export { HAND_BACK_MS } from './worker/run-worker.js';
export type { EngineLogger } from './internal/logger.js';
// Embedding models are models: resolved from the environment and called through the AI SDK as chat models are.
// What knowledge bases do with them (the embedding worker, the search) lives in @maitento/server's knowledge module.
export { embeddingModelFromEnv, embedQuery, embedTexts, unit } from './models/embedding.js';
export type { ModelResolver, ResolvedModel } from './models/resolve.js';
export { missingModelSetting, modelsFromEnvironment, parseModelSpec } from './models/resolve.js';
export type { ScriptTurn } from './models/scripted.js';
export { scriptEndedText, scriptedModel } from './models/scripted.js';
export type { RunTelemetry, ToolSpan } from './telemetry/run-telemetry.js';
export type { RunWakeups } from './worker/queue.js';
export { RUN_QUEUE } from './worker/queue.js';
export { connectionCredential, providerClient } from './runs/connection-tokens.js';
export type { AuthorizationNeed } from './runs/connection-tokens.js';
