import { afterEach, describe, expect, it } from 'vitest';
import { parseOtlpHeaders, telemetrySettingsFromEnv } from '../src/engine/settings.js';
import { silentLogger } from '../src/internal/logger.js';
import { startProviders } from '../src/telemetry/provider.js';

// What OpenTelemetry reads of the environment and when it starts at all (docs/telemetry.md).
const NAMES = [
  'OTEL_SDK_DISABLED',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_SERVICE_NAME',
  'OTEL_METRIC_EXPORT_INTERVAL',
  'OTEL_BSP_SCHEDULE_DELAY',
  'MAITENTO_OTEL_CAPTURE_CONTENT',
];
const saved = Object.fromEntries(NAMES.map((name) => [name, process.env[name]]));

function withEnv(values: Record<string, string>) {
  for (const name of NAMES) delete process.env[name];
  Object.assign(process.env, values);
  return telemetrySettingsFromEnv();
}

afterEach(() => {
  for (const name of NAMES) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

describe('OpenTelemetry settings', () => {
  it('without an endpoint nothing starts (and nothing is loaded)', async () => {
    const settings = withEnv({ OTEL_SERVICE_NAME: 'x' });
    expect(settings.tracesUrl).toBeUndefined();
    expect(settings.metricsUrl).toBeUndefined();
    expect(await startProviders(settings, silentLogger)).toBeUndefined();
  });

  it('OTEL_SDK_DISABLED=true wins over an endpoint', async () => {
    const settings = withEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' });
    expect(await startProviders(settings, silentLogger)).toBeUndefined();
  });

  it('derives the signal URLs from the base endpoint; a per-signal one is used as is', () => {
    expect(withEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })).toMatchObject({
      tracesUrl: 'http://c:4318/v1/traces',
      metricsUrl: 'http://c:4318/v1/metrics',
      protocol: 'http/protobuf',
      serviceName: 'maitento',
      metricIntervalMs: 60_000,
      spanDelayMs: 1000,
      captureContent: false,
    });
    expect(withEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t/only' })).toMatchObject({
      tracesUrl: 'http://t/only',
      metricsUrl: undefined,
    });
  });

  it('reads OTEL_BSP_SCHEDULE_DELAY as the span batch delay; 0 is kept, anything not a number >= 0 is the default', () => {
    expect(withEnv({ OTEL_BSP_SCHEDULE_DELAY: '50' }).spanDelayMs).toBe(50);
    expect(withEnv({ OTEL_BSP_SCHEDULE_DELAY: '0' }).spanDelayMs).toBe(0);
    expect(withEnv({ OTEL_BSP_SCHEDULE_DELAY: '-5' }).spanDelayMs).toBe(1000);
    expect(withEnv({ OTEL_BSP_SCHEDULE_DELAY: 'soon' }).spanDelayMs).toBe(1000);
  });

  it('refuses grpc (or any protocol but OTLP over HTTP) at start with api:telemetry:protocol-unsupported', async () => {
    const settings = withEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    await expect(startProviders(settings, silentLogger)).rejects.toMatchObject({
      code: 'api:telemetry:protocol-unsupported',
    });
  });

  it('reads OTEL_EXPORTER_OTLP_HEADERS as URL-encoded key=value pairs', () => {
    expect(parseOtlpHeaders('api-key=a%20b, x-team = ops ,broken,=nokey')).toEqual({
      'api-key': 'a b',
      'x-team': 'ops',
    });
  });
});
