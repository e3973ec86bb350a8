// Edit, then approve (decision 0215): the arguments a person sets are prepared exactly as the model's call is.
import { isPreparedRequest } from '@maitento/gateway';
import { type ApprovalRecord, findRun } from '@maitento/store';
import { engineErrors } from '../errors.js';
import type { EngineDeps, RunContext } from '../loop/context.js';
import { callInput, runBindingsFor, shownArguments } from '../loop/tool-input.js';
import type { PinnedLoader } from '../runs/pinned.js';

/** The edited call as a person approves it: the arguments shown again and the hash of the prepared request. */
export interface PreparedEdit {
  argumentsJson: string;
  requestHash: string;
}

/** How long preparing an edited call may take (it reads a secret and checks the URL; nothing is sent). */
const PREPARE_EDIT_MS = 30_000;

/**
 * Prepares the call an approval covers with `args` in place of the model's arguments: the model-settable arguments
 * (the tool's definition as the model sees it), merged with the tool's fixed values and the run's inputs by the
 * gateway's `prepare`, as the model's own call was; its checks refuse a bound field, a field the model cannot set
 * (`api:approvals:edit-not-allowed`) and a request that does not fit the schema (`api:approvals:edit-invalid`).
 */
export async function prepareEdit(
  deps: EngineDeps,
  loader: PinnedLoader,
  approval: ApprovalRecord,
  args: unknown,
): Promise<PreparedEdit> {
  const id = approval.id;
  if (approval.runId === null || approval.step === null || approval.callIndex === null) {
    throw engineErrors.create('api:approvals:edit-outside-run', { id });
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw engineErrors.create('api:approvals:edit-invalid', {
      tool: approval.functionName,
      problems: 'the arguments are not a JSON object',
    });
  }
  const run = await findRun(deps.db, approval.runId, approval.namespace);
  if (run === undefined) throw engineErrors.create('api:approvals:not-found', { id });
  const pinned = await loader.load(approval.namespace, run.versions, run.agent ?? undefined);
  const tool = pinned.agentTools.tools.find((t) => t.tool.name === approval.functionName);
  if (tool === undefined) throw engineErrors.create('api:approvals:not-found', { id });
  // The run as the worker sees it, for the one way a call's input is built (the run's inputs, bindings, secret).
  const signal = AbortSignal.timeout(PREPARE_EDIT_MS);
  const ctx = { ...deps, run, pinned, signal } as unknown as RunContext;
  // The same identity as the model's call: the edited call keeps its Idempotency-Key.
  const input = await callInput(ctx, tool, args, `${run.id}:${approval.step}:${approval.callIndex}`, signal);
  const prepared = await deps.gateway.prepare(input);
  if (!isPreparedRequest(prepared)) {
    if (prepared.code === 'api:gateway:argument-bound' || prepared.code === 'api:gateway:argument-unknown') {
      throw engineErrors.create('api:approvals:edit-not-allowed', { id, problem: prepared.error ?? '' });
    }
    throw engineErrors.create('api:approvals:edit-invalid', {
      tool: approval.functionName,
      problems: prepared.error ?? prepared.code ?? 'the call could not be prepared',
    });
  }
  return { argumentsJson: shownArguments(args, runBindingsFor(ctx, tool)), requestHash: prepared.hash };
}
