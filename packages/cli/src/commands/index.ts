import type { Command } from 'commander';
import type { Io } from '../internal/output.js';
import { register as adminKeyCreate } from './admin-key-create.js';
import { register as agentGet } from './agent-get.js';
import { register as agentList } from './agent-list.js';
import { register as agentVersions } from './agent-versions.js';
import { register as approvalApprove } from './approval-approve.js';
import { register as approvalGet } from './approval-get.js';
import { register as approvalList } from './approval-list.js';
import { register as approvalReject } from './approval-reject.js';
import { register as audit } from './audit.js';
import { register as usage } from './usage.js';
import { register as check } from './check.js';
import { register as completion } from './completion.js';
import { register as connectorGet } from './connector-get.js';
import { register as connectorList } from './connector-list.js';
import { register as connectorVersionDisable } from './connector-version-disable.js';
import { register as connectorVersionEnable } from './connector-version-enable.js';
import { register as connectorVersions } from './connector-versions.js';
import { register as deploy } from './deploy.js';
import { register as extopCall } from './extop-call.js';
import { register as extopGet } from './extop-get.js';
import { register as extopList } from './extop-list.js';
import { register as extopVersionDisable } from './extop-version-disable.js';
import { register as extopVersionEnable } from './extop-version-enable.js';
import { register as extopVersions } from './extop-versions.js';
import { register as fmt } from './fmt.js';
import { register as fsCreate } from './fs-create.js';
import { register as fsGet } from './fs-get.js';
import { register as fsLs } from './fs-ls.js';
import { register as fsPut } from './fs-put.js';
import { register as importCommand } from './import.js';
import { register as interactionApprove } from './interaction-approve.js';
import { register as interactionBudget } from './interaction-budget.js';
import { register as interactionCancel } from './interaction-cancel.js';
import { register as interactionChat } from './interaction-chat.js';
import { register as interactionGet } from './interaction-get.js';
import { register as interactionList } from './interaction-list.js';
import { register as interactionLogs } from './interaction-logs.js';
import { register as interactionReject } from './interaction-reject.js';
import { register as interactionRun } from './interaction-run.js';
import { register as interactionStatus } from './interaction-status.js';
import { register as interactionVersions } from './interaction-versions.js';
import { register as keyCreate } from './key-create.js';
import { register as keyDelete } from './key-delete.js';
import { register as keyList } from './key-list.js';
import { register as kbAdd } from './kb-add.js';
import { register as kbCreate } from './kb-create.js';
import { register as kbList } from './kb-list.js';
import { register as kbSearch } from './kb-search.js';
import { register as login } from './login.js';
import { register as lsp } from './lsp.js';
import { register as mcpConfig } from './mcp-config.js';
import { register as migrate } from './migrate.js';
import { register as namespaceCreate } from './namespace-create.js';
import { register as quotaSet } from './quota-set.js';
import { register as quotas } from './quotas.js';
import { register as resourceDelete } from './resource-delete.js';
import { register as runList } from './run-list.js';
import { register as runsPrune } from './runs-prune.js';
import { register as scheduleHistory } from './schedule-history.js';
import { register as scheduleList } from './schedule-list.js';
import { register as schedulePause } from './schedule-pause.js';
import { register as scheduleResume } from './schedule-resume.js';
import { register as secretCreate } from './secret-create.js';
import { register as secretDelete } from './secret-delete.js';
import { register as authProviderList } from './auth-provider-list.js';
import { register as connectionDelete } from './connection-delete.js';
import { register as connectionGet } from './connection-get.js';
import { register as connectionLink } from './connection-link.js';
import { register as connectionList } from './connection-list.js';
import { register as secretKeyRotate } from './secret-key-rotate.js';
import { register as secretList } from './secret-list.js';
import { register as secretRotate } from './secret-rotate.js';
import { register as serve } from './serve.js';
import { register as webhookCreate } from './webhook-create.js';
import { register as webhookDeliveries } from './webhook-deliveries.js';
import { register as webhookDelete } from './webhook-delete.js';
import { register as webhookList } from './webhook-list.js';
import { register as webhookRotate } from './webhook-rotate.js';
import { register as webhookTest } from './webhook-test.js';
import { register as triggerDeliveries } from './trigger-deliveries.js';
import { register as worker } from './worker.js';

/** A command module: adds one `mt` command to the program. */
export type RegisterCommand = (program: Command, io: Io) => void;

// One line per command file; keep alphabetical. Each file exports `register`.
export const commands: RegisterCommand[] = [
  adminKeyCreate,
  agentGet,
  agentList,
  agentVersions,
  approvalApprove,
  approvalGet,
  approvalList,
  approvalReject,
  audit,
  usage,
  authProviderList,
  check,
  completion,
  connectionDelete,
  connectionGet,
  connectionLink,
  connectionList,
  connectorGet,
  connectorList,
  connectorVersionDisable,
  connectorVersionEnable,
  connectorVersions,
  deploy,
  extopCall,
  extopGet,
  extopList,
  extopVersionDisable,
  extopVersionEnable,
  extopVersions,
  fmt,
  fsCreate,
  fsGet,
  fsLs,
  fsPut,
  importCommand,
  interactionApprove,
  interactionBudget,
  interactionCancel,
  interactionGet,
  interactionList,
  interactionLogs,
  interactionReject,
  interactionRun,
  interactionChat,
  interactionStatus,
  interactionVersions,
  keyCreate,
  keyDelete,
  keyList,
  kbAdd,
  kbCreate,
  kbList,
  kbSearch,
  login,
  lsp,
  mcpConfig,
  migrate,
  namespaceCreate,
  quotaSet,
  quotas,
  resourceDelete,
  runList,
  runsPrune,
  scheduleHistory,
  scheduleList,
  schedulePause,
  scheduleResume,
  secretCreate,
  secretDelete,
  secretKeyRotate,
  secretList,
  secretRotate,
  serve,
  webhookCreate,
  webhookDeliveries,
  webhookDelete,
  webhookList,
  webhookRotate,
  webhookTest,
  triggerDeliveries,
  worker,
];
