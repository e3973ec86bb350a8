/** A positive number from the environment, or `fallback` when unset or unusable. */
export function envNumber(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

/** A positive number from the environment, or undefined when unset (a feature that is off by default). */
export function envOptional(name: string): number | undefined {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

/** The largest a run's inputs may be, in bytes of their JSON text, when `MT_RUN_INPUT_MAX_BYTES` is unset. */
export const DEFAULT_RUN_INPUT_MAX_BYTES = 256 * 1024;

/** `MT_RUN_INPUT_MAX_BYTES`: the largest a run's inputs may be, in bytes of their JSON text (default 256 KiB). */
export function runInputMaxBytes(): number {
  return Math.floor(envNumber('MT_RUN_INPUT_MAX_BYTES', DEFAULT_RUN_INPUT_MAX_BYTES));
}
