import type { Maitento, RunView } from '@maitento/sdk';
import { type Io, printJson } from './output.js';
import { describeEvent, describeWaiting, resultText } from './run-output.js';

/** How a followed run stood when `mt` stopped following it. */
export type FollowOutcome = 'completed' | 'waiting' | 'failed';

function report(io: Io, run: RunView, json: boolean): FollowOutcome {
  if (json) printJson(io, run);
  if (run.status === 'PendingApproval') {
    if (!json) io.out(describeWaiting(run));
    return 'waiting';
  }
  if (run.status === 'Completed') {
    if (!json) io.out(resultText(run));
    return 'completed';
  }
  if (!json) {
    const why = run.error ? ` [${run.error.code}]: ${run.error.message}` : '';
    io.err(`run ${run.id} ${run.status === 'Cancelled' ? 'was cancelled' : `failed${why}`}`);
  }
  return 'failed';
}

/**
 * Follows a run over its event stream, printing a readable line per event on stderr, until it ends or
 * starts waiting for a person; then prints the answer, the pending call with the commands that answer
 * it, or the error (the run as JSON with `json`). Only events with `seq` above `after` are printed.
 */
export async function followRun(
  client: Maitento,
  io: Io,
  runId: string,
  json: boolean,
  after = 0,
): Promise<FollowOutcome> {
  for await (const event of client.interactionRuns.events(runId, { after })) {
    io.err(describeEvent(event));
    // The run stores `run-waiting` with its PendingApproval status, after the turn's other calls are made.
    if (event.type === 'run-waiting') {
      const run = await client.interactionRuns.get(runId);
      if (run.status === 'PendingApproval') return report(io, run, json);
    }
  }
  return report(io, await client.interactionRuns.get(runId), json);
}

/** The `seq` of a run's last stored event (0 when none), to follow only what happens after it. */
export async function lastEventSeq(client: Maitento, runId: string): Promise<number> {
  let last = 0;
  for await (const event of client.interactionRuns.storedEvents(runId)) last = event.seq;
  return last;
}
