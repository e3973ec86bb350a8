import type { RunContext } from '../loop/context.js';
import type { TracedRun } from './run-telemetry.js';

export { startProviders } from './provider.js';
export { approvalSpanId, RunTelemetry, type RunTraceIds, type TracedRun } from './run-telemetry.js';

/** What the telemetry reads of a run a worker executes. */
export function tracedRun(ctx: Pick<RunContext, 'run' | 'pinned'>): TracedRun {
  return { run: ctx.run, model: ctx.pinned.agent.resource.model, agentName: ctx.pinned.agentTools.agentName };
}
