import { type Engine, type EngineLogger, StartDeclined } from '@maitento/engine';
import { isMtError } from '@maitento/errors';
import type { Trigger } from '@maitento/lang';
import {
  claimChainDelivery,
  type Db,
  FALLBACK_POLL_MS,
  findRun,
  getAnyVersion,
  type PendingChainDelivery,
  pendingChainDeliveries,
  refuseChainDelivery,
  TRIGGER_CHAIN_SWEEP_MS,
  type Wakeups,
  wakeTopics,
} from '@maitento/store';
import { startTurnLoop, type TurnLoop } from '../server/turn-loop.js';
import { serverErrors } from '../errors.js';
import { pointerValue } from '../hooks/verify.js';

// The chaining loop of triggers (docs/schedules-and-triggers.md "When another run ends", decision 0350), one in every
// `mt serve` and `mt worker` (wired by runtime.ts). A run's end that a trigger's `on` names is a `pending` delivery
// written by the statement that records the end (store runs.ts), so an end is never without its delivery. This loop
// starts each delivery's run with a claim that turns the row `started` in the run's own transaction: exactly one
// process starts it, and one killed before its commit leaves the row pending for the others (woken at once by
// `triggers`) or for the sweep (TRIGGER_CHAIN_SWEEP_MS). A delivery whose run cannot start for a reason that will not
// change (the depth limit, an input the mapping did not give) is refused, with its code, in the delivery log.

/** How many deliveries owed one turn reads. */
const BATCH = 100;

/** Options of {@link startChainer}. */
export interface ChainerOptions {
  db: Db;
  engine: Engine;
  logger?: EngineLogger;
  /** The wake-ups (`triggers`); without them the loop reads every `pollMs`. */
  wakeups?: Wakeups;
  /** The wait between reads while wake-ups are not listening (default FALLBACK_POLL_MS). */
  pollMs?: number;
  /** The sweep while they listen (default TRIGGER_CHAIN_SWEEP_MS). */
  sweepMs?: number;
}

/** A running chaining loop: `turn()` starts the deliveries owed now (tests; the loop calls it itself). */
export type Chainer = TurnLoop;

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** What a chaining trigger's pointers read: the ended run. */
export function endedRunDocument(run: {
  id: string;
  interaction: string;
  interactionVersion: number;
  status: string;
  result: string | null;
  resultStructured: boolean;
  errorCode: string | null;
  errorMessage: string | null;
  inputs: Record<string, unknown>;
  endUser: string | null;
}): Record<string, unknown> {
  let result: unknown = run.result;
  if (run.result !== null && run.resultStructured) {
    try {
      result = JSON.parse(run.result);
    } catch {
      result = run.result;
    }
  }
  return {
    runId: run.id,
    interaction: { name: run.interaction, version: run.interactionVersion },
    status: run.status,
    result,
    error: run.errorCode === null ? null : { code: run.errorCode, message: run.errorMessage },
    inputs: run.inputs,
    endUser: run.endUser,
  };
}

/** Starts the chaining loop of this process. */
export function startChainer(options: ChainerOptions): Chainer {
  const { db, engine, logger } = options;
  const pollMs = options.pollMs ?? FALLBACK_POLL_MS;
  const sweepMs = options.sweepMs ?? TRIGGER_CHAIN_SWEEP_MS;

  const refuse = async (d: PendingChainDelivery, error: { code: string; message: string }) => {
    const key = { namespace: d.namespace, trigger: d.trigger, runId: d.runId };
    if (await refuseChainDelivery(db, key, error)) {
      logger?.warn(
        { namespace: d.namespace, trigger: d.trigger, endedRunId: d.runId, code: error.code, err: error.message },
        'trigger: a delivery on a run end was refused',
      );
    }
  };

  // One delivery owed: the run its trigger's version starts, with the ended run's values mapped to its inputs. Answers
  // whether it is settled (started, here or elsewhere, or refused); false: left pending for a later turn.
  const deliver = async (d: PendingChainDelivery): Promise<boolean> => {
    const key = { namespace: d.namespace, trigger: d.trigger, runId: d.runId };
    const stored = await getAnyVersion<Trigger>(db, d.namespace, 'trigger', d.trigger, d.version);
    const ended = await findRun(db, d.runId, d.namespace);
    const trigger = stored?.resource;
    if (trigger?.on === undefined || ended === undefined) {
      const what = ended === undefined ? `the run ${d.runId} is gone` : `version ${d.version} of the trigger is gone`;
      await refuse(d, serverErrors.create('api:triggers:start-refused', { detail: what }));
      return true;
    }
    const document = endedRunDocument(ended);
    const inputs: Record<string, unknown> = {};
    for (const [input, mapping] of Object.entries(trigger.inputs)) {
      const value = pointerValue(document, mapping.pointer);
      if (value !== undefined && value !== null) inputs[input] = value;
      else if (mapping.default !== undefined) inputs[input] = mapping.default;
    }
    const interactionVersion =
      stored?.pins.find((pin) => pin.kind === 'interaction' && pin.name === trigger.interaction)?.version ??
      stored?.pins.find((pin) => pin.kind === 'interaction')?.version;
    const status = ended.status === 'Failed' ? 'Failed' : 'Completed';
    try {
      await engine.startRun(
        d.namespace,
        trigger.interaction,
        {
          inputs,
          interactive: false,
          ...(interactionVersion === undefined ? {} : { version: interactionVersion }),
          // The run goes on for the same person, as a child run does.
          ...(ended.endUser === null ? {} : { endUser: ended.endUser }),
        },
        undefined,
        {
          origin: { kind: 'trigger', name: d.trigger, version: d.version, eventId: ended.id, runId: ended.id, status },
          depth: ended.depth + 1,
          claim: (tx, runId) => claimChainDelivery(tx, key, runId),
        },
      );
      return true;
    } catch (error) {
      // Another process started it (before, or meanwhile).
      if (error instanceof StartDeclined) return true;
      if (isMtError(error)) {
        if (error.code === 'api:triggers:too-deep') await refuse(d, error);
        else if (error.code.startsWith('api:interactions:input') || error.code === 'api:runs:input-too-large') {
          await refuse(d, serverErrors.create('api:triggers:inputs-refused', { detail: error.message }));
        } else await refuse(d, serverErrors.create('api:triggers:start-refused', { detail: error.message }));
        return true;
      }
      // Not the delivery's fault (the database, a process stopping): left pending, the next sweep tries again.
      logger?.warn(
        { namespace: d.namespace, trigger: d.trigger, endedRunId: d.runId, err: message(error) },
        'trigger: a delivery on a run end could not start its run; the next sweep tries again',
      );
      return false;
    }
  };

  // One turn: every delivery owed, oldest first. Answers the wait before the next turn.
  const turn = async (closing: () => boolean): Promise<number> => {
    const owed = await pendingChainDeliveries(db, BATCH);
    let settled = 0;
    for (const d of owed) {
      if (closing()) break;
      try {
        if (await deliver(d)) settled += 1;
      } catch (error) {
        logger?.warn(
          { namespace: d.namespace, trigger: d.trigger, endedRunId: d.runId, err: message(error) },
          'trigger: a delivery on a run end failed; the next turn tries again',
        );
      }
    }
    // A full batch that moved on: the next one at once (one left pending in full waits for the sweep).
    if (owed.length === BATCH && settled > 0) return 0;
    return options.wakeups?.listening ? sweepMs : pollMs;
  };

  // A run's end owed a delivery, in any process, wakes it (`triggers`): it reads them now.
  return startTurnLoop({
    turn,
    wakeups: options.wakeups,
    topic: wakeTopics.triggers,
    pollMs,
    logger,
    failed: 'trigger: a chaining turn failed; the next one tries again',
  });
}
