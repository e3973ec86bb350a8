import { type Histogram, ROOT_CONTEXT, type Tracer, defaultTextMapGetter, trace } from '@opentelemetry/api';
import type { IdGenerator } from '@opentelemetry/sdk-trace';
import type { TelemetrySettings } from '../engine/settings.js';
import { engineErrors } from '../errors.js';
import type { EngineLogger } from '../internal/logger.js';
import { APPROVAL_WAIT_BUCKETS, DURATION_BUCKETS, METRIC, TOKEN_BUCKETS } from './attributes.js';

/** How long a stop waits for the last spans and metrics to leave (SIGTERM): within the 5 s promised. */
export const FLUSH_DEADLINE_MS = 4000;
/** Spans kept while the collector does not take them; more are dropped. */
const MAX_QUEUED_SPANS = 2048;
const WARN_EVERY_MS = 60_000;
/**
 * How long one export (with the exporter's retries) may take. Its timers keep the process alive, so this also bounds
 * how long a stopping process lingers after the flush when the collector is down.
 */
const EXPORT_TIMEOUT_MS = 3000;

/**
 * Trace and span ids that are chosen before the span exists: a run's root span and an approval's span are emitted
 * when they end (possibly in another process) with the ids their children already name as parent. Any id not
 * preset is random.
 */
export class PresetIdGenerator implements IdGenerator {
  readonly #random: IdGenerator;
  constructor(random: IdGenerator) {
    this.#random = random;
  }
  #traceId: string | undefined;
  #spanId: string | undefined;

  /** The ids the next span started (synchronously, right after) gets. */
  preset(spanId: string, traceId?: string): void {
    this.#spanId = spanId;
    this.#traceId = traceId;
  }

  clear(): void {
    this.#spanId = undefined;
    this.#traceId = undefined;
  }

  generateTraceId(): string {
    const id = this.#traceId;
    this.#traceId = undefined;
    return id ?? this.#random.generateTraceId();
  }

  generateSpanId(): string {
    const id = this.#spanId;
    this.#spanId = undefined;
    return id ?? this.#random.generateSpanId();
  }

  /** A fresh random span id (for ids allocated ahead, such as a run's root span). */
  randomSpanId(): string {
    return this.#random.generateSpanId();
  }

  randomTraceId(): string {
    return this.#random.generateTraceId();
  }
}

interface Exporter {
  export(items: unknown, done: (result: { code: number; error?: Error }) => void): void;
}

/** ExportResultCode.SUCCESS of @opentelemetry/core. */
const EXPORT_SUCCESS = 0;

/** The exporter, warning (at most once a minute) when the collector does not take what it is sent. */
function warnOnFailure<T extends object>(exporter: T, what: string, log: EngineLogger): T {
  let last = 0;
  let dropped = 0;
  const inner = exporter as unknown as Exporter;
  return new Proxy(exporter, {
    get(target, key, receiver) {
      if (key !== 'export') return Reflect.get(target, key, receiver);
      return (items: unknown, done: (result: { code: number; error?: Error }) => void) =>
        inner.export.call(target, items, (result) => {
          if (result.code !== EXPORT_SUCCESS) {
            dropped++;
            const now = Date.now();
            if (now - last >= WARN_EVERY_MS) {
              last = now;
              log.warn(
                { err: result.error?.message, failedExports: dropped },
                `OpenTelemetry ${what} could not be exported; they are dropped (the run is not affected)`,
              );
              dropped = 0;
            }
          }
          done(result);
        });
    },
  });
}

/** Everything of the OpenTelemetry SDK one engine uses; made only when an endpoint is set. */
export interface TelemetryProviders {
  tracer: Tracer | undefined;
  ids: PresetIdGenerator;
  histograms: {
    operationDuration: Histogram;
    tokenUsage: Histogram;
    invokeAgentDuration: Histogram;
    executeToolDuration: Histogram;
    approvalWait: Histogram;
  };
  captureContent: boolean;
  /** Parses an incoming W3C `traceparent` into its trace id and parent span id (undefined when not valid). */
  parseTraceparent(traceparent: string): { traceId: string; spanId: string } | undefined;
  /** Exports what is left (at most {@link FLUSH_DEADLINE_MS}), then stops. */
  shutdown(): Promise<void>;
}

const PROTOCOLS = new Set(['http/protobuf', 'http/json']);

/**
 * Starts the SDK from `settings`: undefined (nothing loaded, nothing started, nothing costs) without an endpoint or
 * with `OTEL_SDK_DISABLED=true`. Rejects with `api:telemetry:protocol-unsupported` for any protocol but OTLP over
 * HTTP. The SDK's modules are loaded only here, so a process with OpenTelemetry off never loads them.
 */
export async function startProviders(
  settings: TelemetrySettings,
  log: EngineLogger,
): Promise<TelemetryProviders | undefined> {
  if (settings.disabled) return undefined;
  if (settings.tracesUrl === undefined && settings.metricsUrl === undefined) return undefined;
  if (!PROTOCOLS.has(settings.protocol)) {
    throw engineErrors.create('api:telemetry:protocol-unsupported', { protocol: settings.protocol });
  }
  const json = settings.protocol === 'http/json';
  const [core, resources, sdkTrace, sdkMetrics] = await Promise.all([
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/sdk-metrics'),
  ]);
  const { BatchSpanProcessor, AlwaysOnSampler, RandomIdGenerator, TracerProvider } = sdkTrace;
  const { MeterProvider, PeriodicExportingMetricReader } = sdkMetrics;
  const resource = resources.resourceFromAttributes({ 'service.name': settings.serviceName });
  const ids = new PresetIdGenerator(new RandomIdGenerator());
  const common = { headers: settings.headers, timeoutMillis: EXPORT_TIMEOUT_MS };

  let tracerProvider: InstanceType<typeof TracerProvider> | undefined;
  if (settings.tracesUrl !== undefined) {
    const options = { ...common, url: settings.tracesUrl };
    const { OTLPTraceExporter } = json
      ? await import('@opentelemetry/exporter-trace-otlp-http')
      : await import('@opentelemetry/exporter-trace-otlp-proto');
    const exporter = warnOnFailure(new OTLPTraceExporter(options), 'spans', log);
    tracerProvider = new TracerProvider({
      resource,
      idGenerator: ids,
      sampler: new AlwaysOnSampler(),
      spanProcessors: [
        new BatchSpanProcessor({
          exporter,
          maxQueueSize: MAX_QUEUED_SPANS,
          maxExportBatchSize: 512,
          scheduledDelayMillis: settings.spanDelayMs,
          exportTimeoutMillis: EXPORT_TIMEOUT_MS,
        }),
      ],
    });
  }
  let meterProvider: InstanceType<typeof MeterProvider> | undefined;
  if (settings.metricsUrl !== undefined) {
    const options = { ...common, url: settings.metricsUrl };
    const { OTLPMetricExporter } = json
      ? await import('@opentelemetry/exporter-metrics-otlp-http')
      : await import('@opentelemetry/exporter-metrics-otlp-proto');
    const exporter = warnOnFailure(new OTLPMetricExporter(options), 'metrics', log);
    meterProvider = new MeterProvider({
      resource,
      readers: [
        new PeriodicExportingMetricReader({
          exporter,
          exportIntervalMillis: settings.metricIntervalMs,
          exportTimeoutMillis: Math.min(settings.metricIntervalMs, EXPORT_TIMEOUT_MS),
        }),
      ],
    });
  }
  // Without a metrics endpoint the instruments are the API's no-ops.
  const meter = (meterProvider ?? new MeterProvider()).getMeter('maitento');
  const histogram = (spec: { name: string; unit: string }, buckets: number[], description: string) =>
    meter.createHistogram(spec.name, { unit: spec.unit, description, advice: { explicitBucketBoundaries: buckets } });
  const propagator = new core.W3CTraceContextPropagator();
  return {
    tracer: tracerProvider?.getTracer('maitento'),
    ids,
    captureContent: settings.captureContent,
    histograms: {
      operationDuration: histogram(METRIC.operationDuration, DURATION_BUCKETS, 'Duration of GenAI operations'),
      tokenUsage: histogram(METRIC.tokenUsage, TOKEN_BUCKETS, 'Tokens used by model calls'),
      invokeAgentDuration: histogram(METRIC.invokeAgentDuration, DURATION_BUCKETS, 'Duration of runs'),
      executeToolDuration: histogram(METRIC.executeToolDuration, DURATION_BUCKETS, 'Duration of tool calls'),
      approvalWait: histogram(METRIC.approvalWait, APPROVAL_WAIT_BUCKETS, 'Time a call waited for a person'),
    },
    parseTraceparent(traceparent) {
      const context = propagator.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter);
      const span = trace.getSpanContext(context);
      return span === undefined || !trace.isSpanContextValid(span)
        ? undefined
        : { traceId: span.traceId, spanId: span.spanId };
    },
    async shutdown() {
      const done = Promise.allSettled([tracerProvider?.shutdown(), meterProvider?.shutdown()]);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, FLUSH_DEADLINE_MS);
        timer.unref();
      });
      await Promise.race([done, late]);
      clearTimeout(timer);
    },
  };
}
