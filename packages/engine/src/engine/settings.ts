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
  /** `MT_RUN_MAX_DEPTH`: how deep agents may hand tasks to agents (default 3: a run, its child, grandchild, great-grandchild). */
  maxDepth: number;
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
    maxDepth: Math.floor(positive('MT_RUN_MAX_DEPTH') ?? 3),
  };
}

/** Where and how OpenTelemetry data goes (docs/telemetry.md); `undefined` endpoints mean that signal is off. */
export interface TelemetrySettings {
  /** `OTEL_SDK_DISABLED=true`: nothing starts, whatever else is set. */
  disabled: boolean;
  /** `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as is, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`. */
  tracesUrl: string | undefined;
  /** `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` as is, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/metrics`. */
  metricsUrl: string | undefined;
  /** `OTEL_EXPORTER_OTLP_PROTOCOL` (default `http/protobuf`), as written: checked by the telemetry module. */
  protocol: string;
  /** `OTEL_EXPORTER_OTLP_HEADERS`: `key=value,key2=value2`, values URL-encoded. */
  headers: Record<string, string>;
  /** `OTEL_SERVICE_NAME` (default `maitento`). */
  serviceName: string;
  /** `OTEL_METRIC_EXPORT_INTERVAL`: milliseconds between metric exports (default 60 000). */
  metricIntervalMs: number;
  /** `OTEL_BSP_SCHEDULE_DELAY`: milliseconds the span processor waits before exporting a batch (default 1 000). */
  spanDelayMs: number;
  /** `MAITENTO_OTEL_CAPTURE_CONTENT=true`: tool call arguments and results (masked) on `execute_tool` spans. */
  captureContent: boolean;
}

function trimmed(value: string | undefined): string | undefined {
  const text = value?.trim();
  return text === '' ? undefined : text;
}

function signalUrl(own: string | undefined, base: string | undefined, path: string): string | undefined {
  if (own !== undefined) return own;
  return base === undefined ? undefined : `${base.replace(/\/+$/, '')}${path}`;
}

/** Parses `OTEL_EXPORTER_OTLP_HEADERS` (`a=b,c=d`, URL-encoded values); a pair without `=` is skipped. */
export function parseOtlpHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    const key = pair.slice(0, at).trim();
    const raw = pair.slice(at + 1).trim();
    let value = raw;
    try {
      value = decodeURIComponent(raw);
    } catch {
      // not URL-encoded: kept as written
    }
    if (key !== '') headers[key] = value;
  }
  return headers;
}

/** Reads the OpenTelemetry settings (the standard `OTEL_*` variables Maitento honours, and its own). */
export function telemetrySettingsFromEnv(): TelemetrySettings {
  const base = trimmed(process.env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const interval = Number(trimmed(process.env.OTEL_METRIC_EXPORT_INTERVAL));
  const spanDelay = Number(trimmed(process.env.OTEL_BSP_SCHEDULE_DELAY));
  return {
    disabled: trimmed(process.env.OTEL_SDK_DISABLED)?.toLowerCase() === 'true',
    tracesUrl: signalUrl(trimmed(process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), base, '/v1/traces'),
    metricsUrl: signalUrl(trimmed(process.env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT), base, '/v1/metrics'),
    protocol: trimmed(process.env.OTEL_EXPORTER_OTLP_PROTOCOL) ?? 'http/protobuf',
    headers: parseOtlpHeaders(process.env.OTEL_EXPORTER_OTLP_HEADERS),
    serviceName: trimmed(process.env.OTEL_SERVICE_NAME) ?? 'maitento',
    metricIntervalMs: Number.isFinite(interval) && interval > 0 ? interval : 60_000,
    // 0 is allowed: each span is exported as soon as it ends (the SDK still batches what ended together).
    spanDelayMs: Number.isFinite(spanDelay) && spanDelay >= 0 ? spanDelay : 1000,
    captureContent: trimmed(process.env.MAITENTO_OTEL_CAPTURE_CONTENT)?.toLowerCase() === 'true',
  };
}
