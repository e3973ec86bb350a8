import type { Wakeups } from '@maitento/store';

/** Options of {@link startTurnLoop}. */
export interface TurnLoopOptions {
  /**
   * One turn of the loop's work. Answers the wait in ms before the next turn, or undefined for none before a wake-up.
   * `closing()` says whether the loop is being closed (a long turn may stop early).
   */
  turn: (closing: () => boolean) => Promise<number | undefined>;
  /** The wake-ups and the topic that wakes the loop; without them it turns as its turns say. */
  wakeups?: Pick<Wakeups, 'on' | 'onLost'>;
  topic: string;
  /** The wait after a turn that failed, and the longest wait while wake-ups are lost. */
  pollMs: number;
  logger?: { warn(obj: object, msg: string): void };
  /** Logged (with the error as `err`) when a turn fails: "schedule: a turn failed; the next one tries again". */
  failed: string;
}

/** A running loop. */
export interface TurnLoop {
  /** One turn now, or the one under way (tests; the loop calls it itself). */
  turn(): Promise<void>;
  /** As a wake-up of its topic does, in this process: a turn now, or one right after the turn under way. */
  wake(): void;
  /** Stops the loop and waits for the turn under way. */
  close(): Promise<void>;
}

/**
 * A loop of turns that the wake-ups drive (docs/architecture.md, "Timers"), for the scheduler, the chaining triggers
 * and the embedding worker of every `mt serve` and `mt worker`: one turn at a time; a wake-up during a turn makes the next turn start
 * as soon as it ends, one between turns starts it now; otherwise each turn says how long to wait. When the wake-ups
 * are lost, no wait is longer than `pollMs` until they are back (they then wake every subscriber). The first turn
 * starts at once.
 */
export function startTurnLoop(options: TurnLoopOptions): TurnLoop {
  const { pollMs, logger } = options;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  /** When the pending timer fires (performance.now()), while there is one. */
  let dueAt = Number.POSITIVE_INFINITY;
  let running: Promise<number | undefined> | undefined;
  let wokenWhileRunning = false;
  const closing = () => closed;

  const once = (): Promise<number | undefined> => {
    running ??= options.turn(closing).finally(() => {
      running = undefined;
    });
    return running;
  };

  const loop = (delay: number | undefined) => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    dueAt = Number.POSITIVE_INFINITY;
    if (closed || delay === undefined) return;
    dueAt = performance.now() + delay;
    timer = setTimeout(async () => {
      timer = undefined;
      dueAt = Number.POSITIVE_INFINITY;
      let wait: number | undefined = pollMs;
      try {
        wait = await once();
      } catch (error) {
        logger?.warn({ err: error instanceof Error ? error.message : String(error) }, options.failed);
      }
      if (wokenWhileRunning) {
        wokenWhileRunning = false;
        return loop(0);
      }
      loop(wait === undefined ? undefined : Math.max(wait, 0));
    }, delay);
    timer.unref();
  };

  const wake = () => {
    if (running) wokenWhileRunning = true;
    else loop(0);
  };
  const unsubscribe = options.wakeups?.on(options.topic, wake);
  // Wake-ups lost: a turn within `pollMs`, and each turn's wait then at most that (the turn sees `listening` false).
  const unsubscribeLost = options.wakeups?.onLost?.(() => {
    if (!running && dueAt - performance.now() > pollMs) loop(pollMs);
  });
  loop(0);

  return {
    async turn() {
      await once();
    },
    wake,
    async close() {
      closed = true;
      unsubscribe?.();
      unsubscribeLost?.();
      if (timer) clearTimeout(timer);
      await running?.catch(() => undefined);
    },
  };
}
