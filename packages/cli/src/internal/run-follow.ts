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
    // A call that handed a task to an agent: its child run's steps come in the child's events, and a child that
    // waits for a person makes this run wait with no event of its own (docs/runs.md, "Agents as tools").
    const child = event.type === 'tool-call-started' ? event.data.childRunId : undefined;
    if (typeof child === 'string' && (await followChild(client, io, child, '    ')) === 'waiting') {
      return report(io, await client.interactionRuns.get(runId), json);
    }
  }
  return report(io, await client.interactionRuns.get(runId), json);
}

/**
 * Prints a child run's steps, indented, until it ends ('ended') or waits for a person ('waiting'); its own
 * children likewise, one indent deeper.
 */
async function followChild(client: Maitento, io: Io, runId: string, indent: string): Promise<'ended' | 'waiting'> {
  for await (const event of client.interactionRuns.events(runId)) {
    io.err(`${indent}${describeEvent(event).replaceAll('\n', `\n${indent}`)}`);
    if (event.type === 'run-waiting' && (await client.interactionRuns.get(runId)).status === 'PendingApproval') {
      return 'waiting';
    }
    const child = event.type === 'tool-call-started' ? event.data.childRunId : undefined;
    if (typeof child === 'string' && (await followChild(client, io, child, `${indent}    `)) === 'waiting') {
      return 'waiting';
    }
  }
  return 'ended';
}

/** The `seq` of a run's last stored event (0 when none), to follow only what happens after it. */
export async function lastEventSeq(client: Maitento, runId: string): Promise<number> {
  let last = 0;
  for await (const event of client.interactionRuns.storedEvents(runId)) last = event.seq;
  return last;
}
