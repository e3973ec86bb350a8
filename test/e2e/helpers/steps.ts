/**
 * Named steps of a set-up, so that a set-up that runs out of time says where it was. A step is registered while it
 * runs; {@link setUpWithin} bounds a whole set-up and, when its deadline fires, fails naming the steps still pending
 * (with how long each has waited) and the ones done (with what each took), instead of vitest's bare "Hook timed out".
 * Steps nest: the helpers (the runs stack, the browser) name theirs, and a file names its own around them.
 */

interface Pending {
  name: string;
  since: number;
}

const pending = new Set<Pending>();
const done: string[] = [];
/** The set-up attempt under way: a step of an abandoned one fails as it ends, so that it makes nothing more. */
let attempt = 0;

/** Runs `work` as the step `name`: listed as pending while it runs, and with its time once done. */
export async function step<T>(name: string, work: () => Promise<T>): Promise<T> {
  const entry: Pending = { name, since: Date.now() };
  const mine = attempt;
  pending.add(entry);
  try {
    const made = await work();
    if (mine !== attempt) throw new Error(`${name}: its set-up attempt was abandoned`);
    return made;
  } finally {
    pending.delete(entry);
    done.push(`${name} ${((Date.now() - entry.since) / 1000).toFixed(1)} s`);
    // The last steps are what a report needs (the API helper names every request of a file as one).
    if (done.length > 60) done.splice(0, done.length - 40);
  }
}

/** What is pending and what is done, for an error message. */
export function stepsReport(): string {
  const now = Date.now();
  const waiting = [...pending].map((p) => `${p.name} (${((now - p.since) / 1000).toFixed(1)} s)`);
  return `pending: ${waiting.join(', ') || 'none'}; done: ${done.join(', ') || 'none'}`;
}

/** What {@link setUpWithin} does when an attempt runs out of time. */
export interface SetUpAttempts {
  /** Attempts in all (default 1). */
  attempts?: number;
  /**
   * Closes what an abandoned attempt made (the file's afterAll does the same at the end; both must be safe to run
   * twice). Bounded: 30 s.
   */
  undo?: () => Promise<unknown>;
}

/**
 * Runs a set-up within `ms`: its result, or an error naming the pending and done steps once `ms` have passed. With
 * `attempts` > 1, an attempt out of time is reported (on stderr, with its steps), its steps still under way fail as
 * they end, `undo` closes what it made, and the set-up starts again; the last attempt's error names every attempt's
 * steps. An error the set-up throws is not retried. Give the hook a few seconds more than `attempts` × (`ms` + 30 s).
 */
export async function setUpWithin<T>(ms: number, work: () => Promise<T>, options: SetUpAttempts = {}): Promise<T> {
  const attempts = options.attempts ?? 1;
  const reports: string[] = [];
  for (let i = 1; ; i++) {
    done.length = 0;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), ms);
    });
    const outcome = work().then((made) => ({ made }));
    // An abandoned attempt's rejection is expected (its steps fail as they end): not an unhandled one.
    outcome.catch(() => {});
    try {
      const first = await Promise.race([outcome, late]);
      if (first !== 'late') return first.made;
    } finally {
      clearTimeout(timer);
    }
    const report = `attempt ${i} of the set-up did not finish in ${ms / 1000} s: ${stepsReport()}`;
    reports.push(report);
    attempt += 1;
    pending.clear();
    if (i >= attempts) throw new Error(reports.join('\n'));
    console.error(`${report}; closing what it made and trying again`);
    if (options.undo !== undefined) {
      let undoTimer: NodeJS.Timeout | undefined;
      await Promise.race([
        options.undo().catch((error: unknown) => console.error('closing the abandoned set-up attempt failed:', error)),
        new Promise((resolve) => {
          undoTimer = setTimeout(resolve, 30_000);
        }),
      ]);
      clearTimeout(undoTimer);
    }
  }
}
