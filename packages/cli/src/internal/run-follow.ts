import type { Maitento, RunView } from '@maitento/sdk';
import { type Io, printJson } from './output.js';
import { describeEvent, describeWaiting, resultText } from './run-output.js';

/** How a followed run stood when `mt` stopped following it. */
export type FollowOutcome = 'completed' | 'waiting' | 'failed';

function report(io: Io, run: RunView, json: boolean): FollowOutcome {
  if (json) printJson(io, run);
  if (run.status === 'PendingApproval' || run.status === 'PendingAuthorization' || run.status === 'PendingBudget') {
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
 * Where following a run resumes: the `seq` of its last stored event, and the same for the child run its open call
 * waits on (agents as tools), if that child has not ended; and so on down.
 */
export interface FollowMark {
  runId: string;
  after: number;
  child?: FollowMark;
}

const ENDED = new Set(['run-completed', 'conversation-ended', 'run-failed', 'run-cancelled']);

/**
 * The mark of a run as it stands (read from its stored events): a run's open call is a `tool-call-started` with a
 * `childRunId` and no `tool-result` yet (a parent stops at the first call whose child has not ended). Taken before
 * answering an approval, it lets `--wait` print only the new steps, the child's included: the parent's own stream
 * has no event while its child goes on, asks a person again or ends (docs/runs.md, "Agents as tools").
 */
export async function followMark(client: Maitento, runId: string): Promise<FollowMark & { ended: boolean }> {
  let after = 0;
  let step = 0;
  let ended = false;
  const open = new Map<string, string>();
  for await (const event of client.interactionRuns.storedEvents(runId)) {
    after = event.seq;
    ended = ENDED.has(event.type);
    const d = event.data;
    if (event.type === 'model-response' && typeof d.step === 'number') step = d.step;
    if (event.type === 'tool-call-started' && typeof d.childRunId === 'string')
      open.set(`${step}:${d.index}`, d.childRunId);
    if (event.type === 'tool-result') open.delete(`${step}:${d.index}`);
  }
  const childId = [...open.values()].at(-1);
  const child = childId === undefined ? undefined : await followMark(client, childId);
  // An ended child's stream has nothing after its last event: its parent's `tool-result` comes in the parent's.
  return { runId, after, ended, ...(child && !child.ended ? { child } : {}) };
}

/** The run at the top of a run's tree (itself when it has no parent): the one `--wait` follows to its end. */
export async function topRunOf(client: Maitento, runId: string): Promise<string> {
  let run = await client.interactionRuns.get(runId);
  while (run.parentRunId) run = await client.interactionRuns.get(run.parentRunId);
  return run.id;
}

/**
 * Follows a run over its event stream, printing a readable line per event on stderr, until it ends or
 * starts waiting for a person; then prints the answer, the pending call with the commands that answer
 * it, or the error (the run as JSON with `json`). The whole tree is followed: a call that hands a task to an
 * agent is followed into its child run (its lines indented), and a child that asks a person stops it as the
 * run's own approval does. With `mark` (from {@link followMark}), only what happens after it is printed, the
 * child under way first.
 */
export async function followRun(
  client: Maitento,
  io: Io,
  runId: string,
  json: boolean,
  mark: FollowMark = { runId, after: 0 },
): Promise<FollowOutcome> {
  await followTree(client, io, mark, '');
  return report(io, await client.interactionRuns.get(runId), json);
}

/**
 * Prints a run's steps after its mark, indented, until it ends ('ended') or waits for a person ('waiting'): the
 * child its mark names first, then its own stream, each child a call starts one indent deeper.
 */
async function followTree(client: Maitento, io: Io, mark: FollowMark, indent: string): Promise<'ended' | 'waiting'> {
  const deeper = `${indent}    `;
  if (mark.child) {
    // Resumed below a call made earlier: say which run the indented lines are.
    io.err(`${deeper}(run ${mark.child.runId}, started by a call above, goes on)`);
    if ((await followTree(client, io, mark.child, deeper)) === 'waiting') return 'waiting';
  }
  for await (const event of client.interactionRuns.events(mark.runId, { after: mark.after })) {
    io.err(`${indent}${describeEvent(event).replaceAll('\n', `\n${indent}`)}`);
    // The run stores `run-waiting` with its PendingApproval status, after the turn's other calls are made.
    if (event.type === 'budget-exceeded') {
      if ((await client.interactionRuns.get(mark.runId)).status === 'PendingBudget') return 'waiting';
    }
    if (event.type === 'run-waiting') {
      const status = (await client.interactionRuns.get(mark.runId)).status;
      if (status === 'PendingApproval' || status === 'PendingAuthorization') return 'waiting';
    }
    // A child that waits for a person makes this run wait with no event of its own: its stream tells.
    const child = event.type === 'tool-call-started' ? event.data.childRunId : undefined;
    if (typeof child === 'string' && (await followTree(client, io, { runId: child, after: 0 }, deeper)) === 'waiting') {
      return 'waiting';
    }
  }
  return 'ended';
}
