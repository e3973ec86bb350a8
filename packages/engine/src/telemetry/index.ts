import { type ApprovalRecord, findRun, type Queryable } from '@maitento/store';
import type { RunContext } from '../loop/context.js';
import type { PinnedLoader } from '../runs/pinned.js';
import type { RunTelemetry, TracedRun } from './run-telemetry.js';

export { startProviders } from './provider.js';
export { approvalSpanId, RunTelemetry, type RunTraceIds, type TracedRun } from './run-telemetry.js';

/** What the telemetry reads of a run a worker executes. */
export function tracedRun(ctx: Pick<RunContext, 'run' | 'pinned'>): TracedRun {
  return { run: ctx.run, model: ctx.pinned.agent.resource.model, agentName: ctx.pinned.agentTools.agentName };
}

/**
 * The spans of a run that ended outside a worker's loop (a cancel while it waited, an approval expired by the sweep):
 * its approvals' `await_approval` (expired) and its root span. Never throws: telemetry must not fail the caller.
 */
export async function traceEndedElsewhere(
  telemetry: RunTelemetry,
  db: Queryable,
  loader: PinnedLoader,
  runId: string,
  approvals: ApprovalRecord[],
  errorType: string,
): Promise<void> {
  try {
    const run = await findRun(db, runId);
    if (run === undefined) return;
    const traced = tracedRun({ run, pinned: await loader.load(run.namespace, run.versions) });
    for (const approval of approvals) telemetry.approvalEnded(traced, approval, 'expired');
    telemetry.runEnded(traced, errorType);
  } catch {
    // A run whose versions cannot be read any more has no root span; the run itself has ended.
  }
}
