import { Cron } from 'croner';

// The one place a schedule's cron expression is read, by croner (https://croner.56k.guru): `mt check` with it, and
// the scheduler of `mt serve` and `mt worker` (packages/server/src/schedules) with the same options, so what a deploy
// accepted is what ticks. Daylight saving time is croner's: a local time that does not exist (spring forward) fires
// at the first instant after the gap, one that happens twice (fall back) fires once.

/** A cron expression of 5 fields (minute precision) or 6 (seconds first). */
const CRON_OPTIONS = { mode: '5-or-6-parts', paused: true } as const;

/** Why a cron expression is refused, or undefined when croner reads it. */
export function cronProblem(cron: string): string | undefined {
  const fields = cron.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) {
    return `has ${fields} field${fields === 1 ? '' : 's'}; write 5 (minute hour day month weekday) or 6 (seconds first)`;
  }
  try {
    new Cron(cron, CRON_OPTIONS);
    return undefined;
  } catch (error) {
    return (error instanceof Error ? error.message : String(error)).replace(/^CronPattern: /, '');
  }
}

let zones: Set<string> | undefined;

/** The IANA time zones this runtime knows (Intl), with "UTC". */
export function knownTimeZones(): ReadonlySet<string> {
  zones ??= new Set([...Intl.supportedValuesOf('timeZone'), 'UTC', 'Etc/UTC']);
  return zones;
}

/** Whether `zone` is an IANA time zone this runtime can read times in (aliases such as "Asia/Calcutta" included). */
export function isTimeZone(zone: string): boolean {
  if (knownTimeZones().has(zone)) return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return zone.includes('/') || zone === 'UTC';
  } catch {
    return false;
  }
}

/** The first tick of `cron` in `timezone` strictly after `after`, or undefined when there is none. */
export function nextTick(cron: string, timezone: string, after: Date): Date | undefined {
  return new Cron(cron, { ...CRON_OPTIONS, timezone }).nextRun(after) ?? undefined;
}

/** The ticks of `cron` in `timezone` strictly after `after` and at or before `until`. */
export interface DueTicks {
  /** The first of them, at most `max`, in order. */
  ticks: Date[];
  /** Whether there are more than `max`. */
  more: boolean;
  /** The latest of them (undefined: none). */
  latest?: Date;
}

/** The ticks of `cron` in `timezone` strictly after `after` and at or before `until` (the first `max` listed). */
export function dueTicks(cron: string, timezone: string, after: Date, until: Date, max: number): DueTicks {
  const job = new Cron(cron, { ...CRON_OPTIONS, timezone });
  const ticks: Date[] = [];
  let more = false;
  for (let next = job.nextRun(after); next !== null && next.getTime() <= until.getTime(); next = job.nextRun(next)) {
    if (ticks.length === max) {
      more = true;
      break;
    }
    ticks.push(next);
  }
  if (!more) return ticks.length === 0 ? { ticks, more } : { ticks, more, latest: ticks[ticks.length - 1] as Date };
  const [latest] = job.previousRuns(1, new Date(until.getTime() + 1));
  return latest === undefined ? { ticks, more } : { ticks, more, latest };
}
