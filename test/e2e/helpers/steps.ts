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

/** Runs `work` as the step `name`: listed as pending while it runs, and with its time once done. */
export async function step<T>(name: string, work: () => Promise<T>): Promise<T> {
  const entry: Pending = { name, since: Date.now() };
  pending.add(entry);
  try {
    return await work();
  } finally {
    pending.delete(entry);
    done.push(`${name} ${((Date.now() - entry.since) / 1000).toFixed(1)} s`);
  }
}

/** What is pending and what is done, for an error message. */
export function stepsReport(): string {
  const now = Date.now();
  const waiting = [...pending].map((p) => `${p.name} (${((now - p.since) / 1000).toFixed(1)} s)`);
  return `pending: ${waiting.join(', ') || 'none'}; done: ${done.join(', ') || 'none'}`;
}

/**
 * Runs a set-up within `ms`: its result, or an error naming the pending and done steps once `ms` have passed. Give
 * the hook a few seconds more than `ms`, so that this error is the one reported. The set-up's own work is not
 * stopped (the file's afterAll closes what it made).
 */
export async function setUpWithin<T>(ms: number, work: () => Promise<T>): Promise<T> {
  done.length = 0;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the set-up did not finish in ${ms / 1000} s: ${stepsReport()}`)), ms);
  });
  try {
    return await Promise.race([work(), late]);
  } finally {
    clearTimeout(timer);
  }
}
