import { type OpsMetrics, opsMetrics } from '@maitento/engine';
import type { CacheLeaseState, Db } from '@maitento/store';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** How long a scrape waits for the database's figures before it answers without them. */
export const METRICS_DB_DEADLINE_MS = 1000;
/** Rows of one status one namespace's count reads at most: a scrape's cost is bounded whatever the table holds. */
export const METRICS_COUNT_CAP = 10_000;

/** The buckets of HTTP request durations, in seconds. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Where `/metrics` is served: its own port (`MT_METRICS_PORT`), apart from the API. */
export interface MetricsListen {
  port: number;
  host: string;
}

/** What a process's metrics read. */
export interface MetricsOptions extends MetricsListen {
  db: Db;
  /** The cache lease's state, for `mt_cache_lease_mode`. */
  lease?: () => CacheLeaseState;
  /** `serve` or `worker`: the `process` label of every series (a constant of target_info). */
  role: 'serve' | 'worker';
}

/** A process's Prometheus endpoint and its instruments. */
export interface ProcessMetrics {
  /** The engine's counters (runs, tool calls). */
  ops: OpsMetrics;
  /** `http://host:port/metrics`. */
  url: string;
  /** Records every request of `app` (method, route template, status) with its duration. */
  observeHttp(app: FastifyInstance): void;
  close(): Promise<void>;
}

interface DbFigures {
  waiting: Map<string, { count: number; oldestSeconds: number }>;
  running: { count: number; oldestSeconds: number };
}

// Per namespace (its index on (namespace, status, created_at)), at most METRICS_COUNT_CAP rows of each status: the
// runs that wait for a person (PendingApproval) or a message (WaitingForInput), and the Running ones (queued or
// executed) but those waiting on a child run (agents as tools: Running, holding no worker, until the child ends). A
// waiting run's updated_at is when it began to wait; a Running one's, its last step.
const DB_FIGURES =
  'SELECT s.status, count(*)::int AS n, ' +
  'COALESCE(extract(epoch FROM now() - min(s.updated_at)), 0)::float8 AS oldest ' +
  'FROM mt_namespaces ns CROSS JOIN unnest(ARRAY[$1, $2, $3, $4, $6, $7]::text[]) st(status) CROSS JOIN LATERAL (' +
  'SELECT r.status, r.updated_at FROM mt_runs r WHERE r.namespace = ns.name AND r.status = st.status ' +
  "AND (r.status <> 'Running' OR NOT EXISTS (SELECT 1 FROM mt_runs c WHERE c.parent_run_id = r.id " +
  "AND c.status NOT IN ('Completed', 'Failed', 'Cancelled'))) " +
  'ORDER BY r.created_at LIMIT $5) s GROUP BY s.status';

/**
 * Starts the process's Prometheus endpoint (the OpenTelemetry SDK's Prometheus exporter on its own port) with the
 * series of docs/operations.md ("Metrics"). The SDK's modules are loaded only here: a process without
 * `MT_METRICS_PORT` never loads them.
 */
export async function startMetrics(options: MetricsOptions): Promise<ProcessMetrics> {
  const [{ PrometheusExporter }, { MeterProvider }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/exporter-prometheus'),
    import('@opentelemetry/sdk-metrics'),
    import('@opentelemetry/resources'),
  ]);
  const exporter = new PrometheusExporter({
    preventServerStart: true,
    withoutScopeInfo: true,
  });
  const provider = new MeterProvider({
    resource: resourceFromAttributes({ 'service.name': 'maitento', 'process.role': options.role }),
    readers: [exporter],
  });
  const meter = provider.getMeter('maitento');

  // The database's figures, read once a scrape within METRICS_DB_DEADLINE_MS; a scrape while a read is under way
  // shares it. When it misses the deadline the scrape answers at once, mt_metrics_database_up is 0, and those gauges
  // keep the last value read (the SDK reports an asynchronous instrument's last observation).
  let reading: Promise<DbFigures> | undefined;
  const readFigures = (): Promise<DbFigures> => {
    reading ??= options.db
      .query<{ status: string; n: number; oldest: number }>(DB_FIGURES, [
        'PendingApproval',
        'PendingAuthorization',
        'WaitingForInput',
        'Running',
        METRICS_COUNT_CAP,
        'PendingBudget',
        'PendingLimit',
      ])
      .then(({ rows }) => {
        const waiting = new Map<string, { count: number; oldestSeconds: number }>();
        let running = { count: 0, oldestSeconds: 0 };
        for (const row of rows) {
          const figure = { count: row.n, oldestSeconds: row.oldest };
          if (row.status === 'Running') running = figure;
          else waiting.set(row.status, figure);
        }
        return { waiting, running };
      })
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };
  const withinDeadline = async (): Promise<DbFigures | undefined> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), METRICS_DB_DEADLINE_MS);
    });
    try {
      return await Promise.race([readFigures().catch(() => undefined), late]);
    } finally {
      clearTimeout(timer);
    }
  };

  const poolConnections = meter.createObservableGauge('mt_db_pool_connections', {
    description: "The database pool's connections, by state (used, idle)",
  });
  const poolWaiting = meter.createObservableGauge('mt_db_pool_waiting', {
    description: 'Requests waiting for a connection of the database pool',
  });
  const poolMax = meter.createObservableGauge('mt_db_pool_max', {
    description: "The database pool's most connections",
  });
  const leaseMode = meter.createObservableGauge('mt_cache_lease_mode', {
    description: "1 for the cache lease's current mode (live, read-through, off), 0 for the others",
  });
  // Registered first, so its snapshot of the pool is taken before the database read below asks the pool for a
  // connection (a request the pool queues until its next tick even when a connection is idle).
  meter.addBatchObservableCallback(
    (observe) => {
      const pool = options.db.poolStats?.();
      if (pool) {
        observe.observe(poolConnections, pool.total - pool.idle, { state: 'used' });
        observe.observe(poolConnections, pool.idle, { state: 'idle' });
        observe.observe(poolWaiting, pool.waiting);
        observe.observe(poolMax, pool.max);
      }
      const mode = options.lease?.().mode;
      if (mode !== undefined) {
        for (const each of ['live', 'read-through', 'off'])
          observe.observe(leaseMode, each === mode ? 1 : 0, { mode: each });
      }
    },
    [poolConnections, poolWaiting, poolMax, leaseMode],
  );

  const waitingRuns = meter.createObservableGauge('mt_runs_waiting', {
    description:
      'Runs waiting for a person (PendingApproval), an end user to connect (PendingAuthorization), a larger budget (PendingBudget), the window of a limit (PendingLimit) or a message (WaitingForInput), by status',
  });
  const waitingOldest = meter.createObservableGauge('mt_runs_waiting_oldest_seconds', {
    description: 'How long the longest-waiting run of each status has waited',
  });
  const queueDepth = meter.createObservableGauge('mt_runs_queued', {
    description: 'Runs Running (queued for a worker or being executed), but those waiting on a child run',
  });
  const queueOldest = meter.createObservableGauge('mt_runs_queued_oldest_seconds', {
    description: 'Time since the Running run changed least recently took its last step (a queued run waits here)',
  });
  const databaseUp = meter.createObservableGauge('mt_metrics_database_up', {
    description:
      "1 when this scrape read the database's figures within its deadline, else 0 (they keep their last value)",
  });
  meter.addBatchObservableCallback(
    async (observe) => {
      const figures = await withinDeadline();
      observe.observe(databaseUp, figures ? 1 : 0);
      if (!figures) return;
      for (const status of [
        'PendingApproval',
        'PendingAuthorization',
        'PendingBudget',
        'PendingLimit',
        'WaitingForInput',
      ]) {
        const figure = figures.waiting.get(status) ?? { count: 0, oldestSeconds: 0 };
        observe.observe(waitingRuns, figure.count, { status });
        observe.observe(waitingOldest, figure.oldestSeconds, { status });
      }
      observe.observe(queueDepth, figures.running.count);
      observe.observe(queueOldest, figures.running.oldestSeconds);
    },
    [waitingRuns, waitingOldest, queueDepth, queueOldest, databaseUp],
  );

  const httpDuration = meter.createHistogram('mt_http_request_duration_seconds', {
    unit: 's',
    description: 'HTTP requests answered, by method, route template and status, and how long each took',
    advice: { explicitBucketBoundaries: HTTP_BUCKETS },
  });

  // The endpoint's own small server (the exporter's request handler): apart from the API, on MT_METRICS_PORT.
  const server = createHttpServer((request, response) => {
    if (request.method === 'GET' && request.url?.split('?')[0] === '/metrics') {
      exporter.getMetricsRequestHandler(request, response);
      return;
    }
    response.statusCode = 404;
    response.end('not found: metrics are at GET /metrics\n');
  });
  server.requestTimeout = 10_000;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await provider.shutdown();
    throw error;
  }
  const address = server.address() as AddressInfo;
  return {
    ops: opsMetrics(meter),
    url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${address.port}/metrics`,
    observeHttp(app) {
      app.addHook('onResponse', (request, reply, done) => {
        httpDuration.record(reply.elapsedTime / 1000, {
          method: request.method,
          // The route's template (/v1/runs/:id), never the URL itself: a bounded set of series.
          route: request.routeOptions.url ?? 'unmatched',
          status: String(reply.statusCode),
        });
        done();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await provider.shutdown();
    },
  };
}
