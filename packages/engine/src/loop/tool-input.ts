import type { MtError } from '@maitento/errors';
import {
  type CallCredential,
  type CallRunInputs,
  callInputOf,
  credentialOf,
  gatewayErrors,
  type RunBindingValue,
  runBindingsOf,
  type ToolCallInput,
} from '@maitento/gateway';
import type { InteractionTool, Json } from '@maitento/lang';
import { apiKeyDeleted, storeErrors } from '@maitento/store';
import { engineErrors } from '../errors.js';
import { findVersion } from '../runs/call-reads.js';
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

/** The credential of a call: the run's auth input for the tool, its default, or the tool's own auth. */
export function credentialFor(ctx: RunContext, tool: InteractionTool): Promise<CallCredential | undefined> {
  return credentialOf({ tool: tool.tool, run: runInputs(ctx), readSecret: secretReader(ctx) });
}

/**
 * A refusal when the tool's or its connector's pinned version has been disabled since: read through
 * `ctx.reads`, after its `sync()` for this call (a version that is gone counts as disabled).
 */
export async function disabledResult(ctx: RunContext, tool: InteractionTool): Promise<LocalResult | undefined> {
  const error = await disabledError(ctx, tool);
  return error && { ok: false, code: error.code, error: error.message };
}

async function disabledError(ctx: RunContext, tool: InteractionTool): Promise<MtError | undefined> {
  const toolVersion = ctx.pinned.tools.get(tool.tool.name)!;
  const connectorVersion = ctx.pinned.connectors.get(tool.connector.name)!;
  const ns = ctx.run.namespace;
  const [toolNow, connectorNow] = await Promise.all([
    findVersion(ctx.reads, ns, 'tool', toolVersion.name, toolVersion.version),
    findVersion(ctx.reads, ns, 'connector', connectorVersion.name, connectorVersion.version),
  ]);
  const toolOn = toolNow?.enabled === true;
  const connectorOn = connectorNow?.enabled === true;
  const error = !toolOn
    ? storeErrors.create('api:extops:version-disabled', { name: toolVersion.name, version: toolVersion.version })
    : !connectorOn
      ? storeErrors.create('api:connectors:version-disabled', {
          name: connectorVersion.name,
          version: connectorVersion.version,
        })
      : undefined;
  return error;
}

/**
 * Why a call made after a wait (an approval, a resume after a crash) may not be made now, read right before
 * sending: a disabled tool or connector version, the deleted key that started the run, a secret gone.
 */
export async function actingRefusal(ctx: RunContext, tool: InteractionTool): Promise<MtError | undefined> {
  await ctx.reads.sync();
  // The key that started the run's tree (a child's is its top run's).
  const keyId = await treeKeyId(ctx);
  const [disabled, keyGone, credential] = await Promise.all([
    disabledError(ctx, tool),
    keyId === null ? false : apiKeyDeleted(ctx.db, ctx.run.namespace, keyId),
    credentialFor(ctx, tool),
  ]);
  if (disabled !== undefined) return disabled;
  if (keyGone) return engineErrors.create('api:calls:key-deleted', { keyId: keyId!, tool: tool.tool.name });
  if (credential !== undefined && 'missing' in credential) {
    return gatewayErrors.create('api:gateway:secret-not-found', {
      secret: credential.missing.secret,
      connector: tool.connector.name,
    });
  }
  return undefined;
}

/** Everything the gateway needs for one call of the run (built by the gateway's `callInputOf`, as every caller's). */
export function callInput(
  ctx: RunContext,
  tool: InteractionTool,
  args: unknown,
  idempotencyKey: string,
  signal: AbortSignal,
): Promise<ToolCallInput> {
  return callInputOf({
    tool: tool.tool,
    connector: tool.connector,
    arguments: args,
    run: runInputs(ctx),
    readSecret: secretReader(ctx),
    idempotencyKey,
    caller: ctx.run.namespace,
    signal,
  });
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
