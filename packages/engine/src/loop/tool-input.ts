import type { MtError } from '@maitento/errors';
import {
  type CallCredential,
  type CallRunInputs,
  callInputOf,
  type RunBindingValue,
  runBindingsOf,
  type ToolCallInput,
} from '@maitento/gateway';
import type { Connector, InteractionTool, Json } from '@maitento/lang';
import { LIMIT_WAIT_IN_WORKER_MS, secretAccess } from '@maitento/store';
import { type ActingCheck, directRefusal, actingRefusal as sharedActingRefusal } from '../approvals/acting.js';
import { type AuthorizationNeed, connectionCredential } from '../runs/connection-tokens.js';
import type { RunContext } from './context.js';
import { treeKeyId } from './sub-agents.js';

/** A tool result the engine makes itself, without calling anything. */
export interface LocalResult {
  ok: false;
  code: string;
  error: string;
}

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

// The run inputs that feed the run's calls: its interaction, the agent that calls, the values given.
function runInputs(ctx: RunContext): CallRunInputs {
  return {
    interaction: ctx.pinned.interaction.resource,
    agent: ctx.pinned.agentTools.agent,
    handedTask: ctx.run.parentRunId !== null,
    inputs: ctx.run.inputs,
    // The second line behind the start's check (secret-inputs.ts): the key of the run's tree, as it is now. A tree
    // with no key recorded (started by a platform token) is not asked.
    mayUseSecret: async (id: string) => {
      const keyId = await treeKeyId(ctx);
      return (
        keyId === null || (await secretAccess(ctx.db, ctx.run.namespace, keyId, [id])).get(id.toLowerCase()) !== false
      );
    },
  };
}

/** The run-input bindings of `tool` for the run's agent, with the run's values. */
export function runBindingsFor(ctx: RunContext, tool: InteractionTool): RunBindingValue[] {
  return runBindingsOf(tool.tool, runInputs(ctx));
}

function secretReader(ctx: RunContext) {
  return async (ref: { id: string } | { name: string }) =>
    (await ctx.reads.readSecretValue(ctx.run.namespace, ref))?.value;
}

/** The end user's access token for an OAuth2 connector of the run (docs/connections.md). */
export function connectionTokenReader(
  ctx: RunContext,
  need?: (need: AuthorizationNeed) => void,
  rejected?: string,
): (connector: Connector) => Promise<CallCredential | undefined> {
  const deps = {
    db: ctx.db,
    secretKey: ctx.secretKey,
    ...(ctx.oauth === undefined ? {} : { oauth: ctx.oauth }),
    readSecret: async (name: string) => (await ctx.reads.readSecretValue(ctx.run.namespace, { name }))?.value,
  };
  return async (connector) => {
    const version = ctx.pinned.connectors.get(connector.name);
    if (version === undefined) throw new Error(`the run pins no connector ${connector.name}`);
    // No end user: undefined, and the gateway answers api:connections:end-user-missing.
    return connectionCredential(deps, ctx.run.namespace, ctx.run.endUser, version, need, rejected);
  };
}

/** The checks of the moment of acting for `tool` in this run: its pinned versions, and the key of the run's tree. */
export async function actingCheck(ctx: RunContext, tool: InteractionTool): Promise<ActingCheck> {
  const toolVersion = ctx.pinned.tools.get(tool.tool.name)!;
  const connectorVersion = ctx.pinned.connectors.get(tool.connector.name)!;
  return {
    reads: ctx.reads,
    db: ctx.db,
    namespace: ctx.run.namespace,
    // The key that started the run's tree (a child's is its top run's).
    keyId: await treeKeyId(ctx),
    tool: { name: toolVersion.name, version: toolVersion.version },
    connector: { name: connectorVersion.name, version: connectorVersion.version },
  };
}

/**
 * A refusal of a call made without a wait (or of asking a person about one): a tool or connector version disabled
 * since, or the key of the run's tree deleted; read through `ctx.reads`, after its `sync()` for this call (a version
 * that is gone counts as disabled).
 */
export async function directRefusalResult(ctx: RunContext, tool: InteractionTool): Promise<LocalResult | undefined> {
  const error = await directRefusal(await actingCheck(ctx, tool));
  return error && { ok: false, code: error.code, error: error.message };
}

/**
 * Why a call made after a wait (an approval, a resume after a crash) may not be made now, read right before
 * sending (approvals/acting.ts, the one place runs and MCP calls decide it).
 */
export async function actingRefusal(ctx: RunContext, tool: InteractionTool): Promise<MtError | undefined> {
  return sharedActingRefusal(await actingCheck(ctx, tool));
}

/** Everything the gateway needs for one call of the run (built by the gateway's `callInputOf`, as every caller's). */
export function callInput(
  ctx: RunContext,
  tool: InteractionTool,
  args: unknown,
  idempotencyKey: string,
  signal: AbortSignal,
  /** An OAuth2 call's credential found just before (not looked up again). */
  credential?: CallCredential,
): Promise<ToolCallInput> {
  return callInputOf({
    tool: tool.tool,
    connector: tool.connector,
    arguments: args,
    run: runInputs(ctx),
    readSecret: secretReader(ctx),
    connectionToken: credential === undefined ? connectionTokenReader(ctx) : async () => credential,
    idempotencyKey,
    caller: ctx.run.namespace,
    signal,
    // The operator's log names the run of a call that hit an internal error.
  }).then((input) => ({
    ...input,
    runId: ctx.run.id,
    // A limit's perKey counts the key that started the run's tree, its perEndUser the run's end user; a call over a
    // "wait" limit waits in the worker only briefly, then durably (PendingLimit, docs/limits.md).
    ...(ctx.run.startedByKeyId === null ? {} : { keyId: ctx.run.startedByKeyId }),
    ...(ctx.run.endUser === null ? {} : { endUser: ctx.run.endUser }),
    limitWaitMs: LIMIT_WAIT_IN_WORKER_MS,
  }));
}

function setPath(target: Record<string, Json>, path: string[], value: Json): void {
  let node = target;
  for (const part of path.slice(0, -1)) {
    const next = node[part];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[part] = {};
    node = node[part] as Record<string, Json>;
  }
  node[path[path.length - 1]!] = value;
}

/** What a person is shown: the model's arguments with the run inputs written into the call (no secret). */
export function shownArguments(args: unknown, bindings: RunBindingValue[]): string {
  const shown = (typeof args === 'object' && args !== null ? structuredClone(args) : {}) as Record<string, Json>;
  for (const { binding, value } of bindings) {
    const chosen = isEmpty(value) ? binding.default : value;
    if (chosen === undefined) continue;
    if (binding.type === 'request') {
      if (typeof shown.request !== 'object' || shown.request === null || Array.isArray(shown.request))
        shown.request = {};
      setPath(shown.request as Record<string, Json>, binding.target.split('/'), chosen);
    } else {
      if (typeof shown.additionalInputs !== 'object' || shown.additionalInputs === null) shown.additionalInputs = {};
      (shown.additionalInputs as Record<string, Json>)[`${binding.type}.${binding.target}`] = chosen;
    }
  }
  return JSON.stringify(shown);
}
