// The one module of the engine that reads the environment (docs/configuration.md); the server reads
// MT_APPROVAL_TTL through `approvalTtlMsFromEnv` rather than a second time.

/** The largest a run's inputs may be, in bytes of their JSON text, when `MT_RUN_INPUT_MAX_BYTES` is unset. */
export const DEFAULT_RUN_INPUT_MAX_BYTES = 256 * 1024;

/** The trimmed value of environment variable `name`, or undefined when unset or empty. */
export function envText(name: string): string | undefined {
  const value = process.env[name]?.trim();
  return value === '' ? undefined : value;
}

function positive(name: string): number | undefined {
  const raw = envText(name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

/** `MT_APPROVAL_TTL` in milliseconds: how long an approval stays valid, or undefined when unset (no limit). */
export function approvalTtlMsFromEnv(): number | undefined {
  const seconds = positive('MT_APPROVAL_TTL');
  return seconds === undefined ? undefined : seconds * 1000;
}

/** How many characters of history a model is sent at most when `MT_HISTORY_MAX_CHARS` is unset (~100k tokens). */
export const DEFAULT_HISTORY_MAX_CHARS = 400_000;

/** `MT_HISTORY_MAX_CHARS`: the most characters of a conversation's history sent to the model (docs/runs.md). */
export function historyMaxCharsFromEnv(): number {
  return Math.floor(positive('MT_HISTORY_MAX_CHARS') ?? DEFAULT_HISTORY_MAX_CHARS);
}

/** The engine's settings from the environment, each with its default (docs/configuration.md). */
export interface EngineSettings {
  /** `MT_MAX_STEPS`: model turns a run may take (default 20). */
  maxSteps: number;
  /** `MT_MODEL_RETRIES`: retries of a failed model request (default 2). */
  modelRetries: number;
  /** `MT_WORKER_CONCURRENCY`: runs a worker executes at once (default 8). */
  workerConcurrency: number;
  /** `MT_RUN_INPUT_MAX_BYTES`: the largest a run's inputs may be, in bytes of their JSON text (default 256 KiB). */
  runInputMaxBytes: number;
  /** `MT_APPROVAL_TTL`: how long an approval waits before the run fails, in ms; undefined (unset) for no limit. */
  approvalTtlMs: number | undefined;
}

/** Reads the engine's settings from the environment; an unusable value falls back to the default. */
export function engineSettingsFromEnv(): EngineSettings {
  return {
    maxSteps: positive('MT_MAX_STEPS') ?? 20,
    modelRetries: Math.floor(positive('MT_MODEL_RETRIES') ?? 2),
    workerConcurrency: positive('MT_WORKER_CONCURRENCY') ?? 8,
    runInputMaxBytes: Math.floor(positive('MT_RUN_INPUT_MAX_BYTES') ?? DEFAULT_RUN_INPUT_MAX_BYTES),
    approvalTtlMs: approvalTtlMsFromEnv(),
  };
}
