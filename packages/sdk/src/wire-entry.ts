// `@maitento/sdk/wire`: the wire's shapes for the packages below the server (@maitento/lang, the store, the engine),
// which use its one declaration without the client: at run time only the plain lists (no TypeBox, no HTTP client);
// every shape as a type (the `Static` type of its TypeBox schema in ./wire/). Everything here is also exported by
// `@maitento/sdk`, as the same objects and types.
export {
  APPROVAL_STATUSES,
  CONNECTION_STATUSES,
  KEY_ROLES,
  RESOURCE_KINDS,
  RUN_EVENT_TYPES,
  RUN_STATUSES,
  SCHEDULE_MISSED,
  SCHEDULE_OVERLAPS,
  SCHEDULE_TICK_STATUSES,
  TERMINAL_EVENT_TYPES,
  TERMINAL_RUN_STATUSES,
  TOKEN_AUTH_METHODS,
  limitWindowMs,
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_EVENT_TYPES,
  TRIGGER_RUN_STATUSES,
  TRIGGER_VERIFY_STYLES,
} from './wire/constants.js';
export type { SecretKeyRotation, SecretKeyStatus } from './resources/secrets.js';
export type { StartRunParams } from './resources/interaction-runs.js';
export type * from './types.js';
export type { Connection, ConnectLink, CreateConnectLinkParams, ListConnectionsParams } from './wire/connections.js';
export type { HookAccepted, ScheduleState, ScheduleTick, TriggerDeliveryLog } from './wire/schedules.js';
export type { Diagnostic } from './wire/diagnostic.js';
export type { KnowledgeBase, KnowledgeDocument, KnowledgeSearchResult } from './wire/knowledge.js';
export type {
  Agent,
  AuthProvider,
  Connector,
  Interaction,
  Resource,
  Schedule,
  TokenAuthMethod,
  Trigger,
  Tool,
  ToolDefinition,
} from './wire/resources.js';
export type { Json } from './wire/schemas.js';
