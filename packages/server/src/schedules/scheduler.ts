import { type Engine, type EngineLogger, StartDeclined } from '@maitento/engine';
import { dueTicks, nextTick } from '@maitento/lang';
import {
  type Db,
  FALLBACK_POLL_MS,
  failQueuedTick,
  queuedTicks,
  recordTicks,
  SCHEDULE_GRACE_MS,
  SCHEDULER_POLL_MS,
  scheduleQueued,
  scheduleRunActive,
  takeQueuedTick,
  type TickingSchedule,
  type TickRow,
  tickingSchedules,
  type Wakeups,
  wakeTopics,
} from '@maitento/store';
import { startTurnLoop, type TurnLoop } from '../server/turn-loop.js';

// The scheduler of schedules (docs/schedules-and-triggers.md, decision 0275), one in every `mt serve` and `mt worker`
// (wired by runtime.ts). Every process ticks every schedule: the tick's row (mt_schedule_ticks, keyed by schedule and
// tick time) is inserted in the transaction that starts its run, so exactly one process starts it, and a process that
// dies before its commit leaves the tick to the others (or to itself after its restart). Nothing is held in memory
// but when to look next: each turn reads the schedules and their latest ticks again. It wakes at the next tick of the
// schedules it read, on `schedules` (a deploy of a schedule, a pause, a resume, in any process), every
// SCHEDULER_POLL_MS while a tick is queued, and every FALLBACK_POLL_MS only while wake-ups are not listening: a
// process with no schedule makes no statement for them.

/** How many missed ticks are listed one by one after downtime; beyond them one row stands for the rest. */
const MISSED_LISTED = 100;

/** Options of {@link startScheduler}. */
export interface SchedulerOptions {
  db: Db;
  engine: Engine;
  logger?: EngineLogger;
  /** The clock (tests inject one). */
  now?: () => Date;
  /** The wake-ups (`schedules`); without them the scheduler reads every `pollMs`. */
  wakeups?: Wakeups;
  /** The wait between reads while wake-ups are not listening (default FALLBACK_POLL_MS). */
  pollMs?: number;
}

/** A running scheduler: `turn()` takes the due ticks now (tests; the loop calls it itself). */
export type Scheduler = TurnLoop;

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Starts the scheduler loop of this process. */
export function startScheduler(options: SchedulerOptions): Scheduler {
  const { db, engine, logger } = options;
  const now = options.now ?? (() => new Date());
  const pollMs = options.pollMs ?? FALLBACK_POLL_MS;

  // Starts the run of one tick; the claim records the tick in the run's transaction.
  const start = async (s: TickingSchedule, tick: Date, claim: 'insert' | 'queued', note?: string): Promise<void> => {
    const key = { namespace: s.namespace, schedule: s.name, tick };
    try {
      await engine.startRun(
        s.namespace,
        s.schedule.interaction,
        { inputs: s.schedule.inputs, interactive: false, version: s.interactionVersion },
        undefined,
        {
          origin: { kind: 'schedule', name: s.name, version: s.version, tick: tick.toISOString() },
          claim: async (tx, runId) =>
            claim === 'queued'
              ? takeQueuedTick(tx, key, s.version, runId)
              : (await recordTicks(tx, [
                  {
                    ...key,
                    version: s.version,
                    status: 'started',
                    runId,
                    ...(note === undefined ? {} : { detail: note }),
                  },
                ])) === 1,
        },
      );
    } catch (error) {
      if (error instanceof StartDeclined) return;
      // The run could not start (its interaction's inputs changed, its version disabled...): the tick says why.
      const detail = message(error);
      if (claim === 'queued') await failQueuedTick(db, key, detail);
      else await recordTicks(db, [{ ...key, version: s.version, status: 'failed', detail }]);
      logger?.warn(
        { namespace: s.namespace, schedule: s.name, tick: tick.toISOString(), err: detail },
        'schedule: a tick could not start its run',
      );
    }
  };

  // A tick on time, by the overlap policy.
  const onTime = async (s: TickingSchedule, tick: Date, note?: string): Promise<void> => {
    const row = (status: TickRow['status'], detail: string): TickRow => ({
      namespace: s.namespace,
      schedule: s.name,
      tick,
      version: s.version,
      status,
      detail,
    });
    if (s.schedule.overlap !== 'allow' && (await scheduleRunActive(db, s.namespace, s.name))) {
      if (s.schedule.overlap === 'skip') {
        await recordTicks(db, [row('skipped', 'the run of an earlier tick had not ended (overlap "skip")')]);
      } else if (await scheduleQueued(db, s.namespace, s.name)) {
        await recordTicks(db, [
          row('skipped', 'the run of an earlier tick had not ended and a tick was queued already'),
        ]);
      } else {
        await recordTicks(db, [row('queued', 'waits for the run of an earlier tick to end (overlap "queue-one")')]);
      }
      return;
    }
    await start(s, tick, 'insert', note);
  };

  // The due ticks of one schedule; answers when its next tick is (ms from now), or undefined.
  const tickSchedule = async (s: TickingSchedule, at: Date): Promise<void> => {
    const { cron, timezone } = s.schedule;
    let anchor = s.deployedAt;
    for (const later of [s.lastTick, s.resumedAt]) if (later !== null && later > anchor) anchor = later;
    const cut = new Date(at.getTime() - SCHEDULE_GRACE_MS);
    if (anchor < cut) {
      // Ticks no process took in time: the missed-tick policy.
      const late = dueTicks(cron, timezone, anchor, cut, MISSED_LISTED);
      if (late.latest !== undefined) {
        const runOnce = s.schedule.missed === 'run-once';
        const missed: TickRow[] = late.ticks
          .filter((t) => !(runOnce && t.getTime() === late.latest?.getTime()))
          .map((t) => ({
            namespace: s.namespace,
            schedule: s.name,
            tick: t,
            version: s.version,
            status: 'missed',
            detail: 'no process was up at its time (missed "skip")',
          }));
        if (late.more) {
          const last = late.ticks[late.ticks.length - 1] as Date;
          if (!runOnce) {
            missed.push({
              namespace: s.namespace,
              schedule: s.name,
              tick: late.latest,
              version: s.version,
              status: 'missed',
              detail: `no process was up at its time, nor at the ticks between ${last.toISOString()} and it (not listed)`,
            });
          }
        }
        if (runOnce)
          for (const row of missed)
            row.detail = 'no process was up at its time; a later tick ran once for it (missed "run-once")';
        await recordTicks(db, missed);
        if (runOnce) {
          await onTime(s, late.latest, 'started late, once for the ticks no process was up for (missed "run-once")');
        }
      }
      anchor = cut;
    }
    for (const tick of dueTicks(cron, timezone, anchor, at, MISSED_LISTED).ticks) await onTime(s, tick);
  };

  // One turn: the due ticks of every schedule, then the queued ones whose earlier run ended. Answers the wait before
  // the next turn (undefined: none before a wake-up).
  const turn = async (): Promise<number | undefined> => {
    const at = now();
    const schedules = await tickingSchedules(db);
    let next = options.wakeups?.listening ? Number.POSITIVE_INFINITY : pollMs;
    for (const s of schedules) {
      if (!s.schedule.enabled || s.paused) continue;
      try {
        await tickSchedule(s, at);
        const upcoming = nextTick(s.schedule.cron, s.schedule.timezone, now());
        if (upcoming !== undefined) next = Math.min(next, Math.max(0, upcoming.getTime() - now().getTime()));
      } catch (error) {
        logger?.warn(
          { namespace: s.namespace, schedule: s.name, err: message(error) },
          'schedule: its turn failed; the next one tries again',
        );
      }
    }
    if (schedules.some((s) => s.schedule.overlap === 'queue-one')) {
      // A queued tick waits for a run's end, which wakes nothing here: looked at again every SCHEDULER_POLL_MS.
      let waiting = false;
      const byKey = new Map(schedules.map((s) => [`${s.namespace}\u0000${s.name}`, s]));
      for (const queued of await queuedTicks(db)) {
        const s = byKey.get(`${queued.namespace}\u0000${queued.schedule}`);
        if (s === undefined) {
          await failQueuedTick(db, queued, 'the schedule is no longer deployed and enabled');
          continue;
        }
        if (!s.schedule.enabled || s.paused || (await scheduleRunActive(db, s.namespace, s.name))) {
          waiting = true;
          continue;
        }
        await start(s, queued.tick, 'queued');
      }
      if (waiting) next = Math.min(next, SCHEDULER_POLL_MS);
    }
    // Just after the tick's time (croner's ticks are whole seconds): never before it.
    return Number.isFinite(next) ? next + 5 : undefined;
  };

  // A deploy of a schedule, a pause or a resume anywhere wakes it (`schedules`): it reads them again now.
  return startTurnLoop({
    turn,
    wakeups: options.wakeups,
    topic: wakeTopics.schedules,
    pollMs,
    logger,
    failed: 'schedule: a turn failed; the next one tries again',
  });
}
