import type { Meter } from '@opentelemetry/api';

/** How a run ended, as the ended-runs counter labels it. */
export type EndedStatus = 'Completed' | 'Failed' | 'Cancelled';

/**
 * The engine's operational counters for `/metrics` (docs/operations.md, "Metrics"): made by the server on its meter,
 * absent when metrics are off. Each method is one instrument update: nothing awaits, nothing fails a run.
 */
export interface OpsMetrics {
  /** A run was started (`POST .../runs`, or a child run handed a task). */
  runStarted(): void;
  /** A run this process executed (or cancelled while it waited) ended. */
  runEnded(status: EndedStatus): void;
  /** A tool call of a run was answered: `outcome` is `ok`, `error` (the upstream's or the gateway's) or `refused`. */
  toolCall(tool: string, outcome: 'ok' | 'error' | 'refused', seconds: number): void;
}

/** The buckets of tool call durations, in seconds: 5 ms to 2 minutes. */
export const TOOL_CALL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** The engine's counters on `meter`. */
export function opsMetrics(meter: Meter): OpsMetrics {
  const started = meter.createCounter('mt_runs_started', { description: 'Runs started' });
  const ended = meter.createCounter('mt_runs_ended', { description: 'Runs ended, by status' });
  const calls = meter.createHistogram('mt_tool_call_duration_seconds', {
    unit: 's',
    description: 'Tool calls of runs, by tool and outcome, and how long each took',
    advice: { explicitBucketBoundaries: TOOL_CALL_BUCKETS },
  });
  return {
    runStarted: () => started.add(1),
    runEnded: (status) => ended.add(1, { status }),
    toolCall: (tool, outcome, seconds) => calls.record(seconds, { tool, outcome }),
  };
}
