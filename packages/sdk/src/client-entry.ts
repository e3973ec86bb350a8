// `@maitento/sdk/client`: the client, its errors and the wire's plain lists (statuses, event types), without the
// TypeBox schemas of the wire (`@maitento/sdk` adds those): they load TypeBox, ~370 modules, which a process that only
// calls the API (the `mt` CLI's commands) does not use. Everything here is also exported by `@maitento/sdk`, as the
// same objects (`instanceof` holds across both entries).
export { Maitento } from './client.js';
export type { ClientOptions, RawRequestSpec, RequestOptions, RequestSpec } from './client.js';
export {
  APIConnectionError,
  APIError,
  APITimeoutError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  MaitentoError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
} from './core/api-error.js';
export type { CallAuthorization, ErrorResponseBody } from './core/api-error.js';
export { SdkErrorRegistry } from './core/error-registry.js';
export type { SdkErrorSpec } from './core/error-registry.js';
export type { ErrorBody } from './core/maitento-error.js';
export { path } from './core/path.js';
export { parseSse } from './core/sse.js';
export type { SseMessage } from './core/sse.js';
export { sdkErrors } from './errors.js';
export type { SdkErrorCode } from './errors.js';
export { Agents } from './resources/agents.js';
export { Approvals } from './resources/approvals.js';
export { Audit } from './resources/audit.js';
export { Usage } from './resources/usage.js';
export type { QuotaStanding, SetQuotasParams, UsageParams, UsageReport } from './resources/usage.js';
export type { AuditEntry, AuditPage, ExportAuditParams, ListAuditParams } from './resources/audit.js';
export { Webhooks } from './resources/webhooks.js';
export type {
  CreateWebhookParams,
  ListWebhookDeliveriesParams,
  RotateWebhookSecretParams,
  UpdateWebhookParams,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from './resources/webhooks.js';
export { AuthProviders } from './resources/auth-providers.js';
export { Schedules } from './resources/schedules.js';
export { Triggers } from './resources/triggers.js';
export type { HookAccepted, ScheduleState, ScheduleTick, TriggerDeliveryLog } from './wire/schedules.js';
export { Connections } from './resources/connections.js';
export type {
  Connection,
  ConnectLink,
  CreateConnectLinkParams,
  ListConnectionsParams,
} from './wire/connections.js';
export { Connectors } from './resources/connectors.js';
export { Deploys } from './resources/deploy.js';
export type { DeployParams } from './resources/deploy.js';
export { Extops } from './resources/extops.js';
export { FileSystems } from './resources/file-systems.js';
export type {
  CreateFileSystemParams,
  FileContent,
  FileInfo,
  FilePage,
  FileSystem,
  ListFilesParams,
  MoveFileParams,
  WriteFileOptions,
  WriteTextParams,
} from './resources/file-systems.js';
export type { ExtopCallParams } from './resources/extops.js';
export { InteractionRuns } from './resources/interaction-runs.js';
export type { ExtendBudgetParams, RunEventsParams, RunParams, StartRunParams } from './resources/interaction-runs.js';
export { Interactions } from './resources/interactions.js';
export { Keys } from './resources/keys.js';
export { Namespaces } from './resources/namespaces.js';
export { Secrets } from './resources/secrets.js';
export type { SecretKeyRotation, SecretKeyStatus } from './resources/secrets.js';
export type * from './types.js';
export type { Diagnostic, Severity } from './wire/diagnostic.js';
export type * from './wire/resources.js';
export { KnowledgeBases } from './resources/knowledge-bases.js';
export type { AddDocumentParams } from './resources/knowledge-bases.js';
export * from './wire/constants.js';
