import type { startWorker } from '@maitento/server';
import { InvalidArgumentError } from 'commander';
import { cliErrors } from '../errors.js';
import { CommandExit, reportError } from '../internal/output.js';
import { runUntilSignal } from '../internal/until-signal.js';
import type { RegisterCommand } from './index.js';

function parseConcurrency(value: string): number {
  if (!/^[1-9][0-9]{0,3}$/.test(value)) throw new InvalidArgumentError('a whole number from 1 to 9999');
  return Number(value);
}

/** `mt worker`: executes runs from the queue, alone, against PostgreSQL, until SIGINT or SIGTERM. */
export const register: RegisterCommand = (program, io) => {
  program
    .command('worker')
    .description('Execute runs from the queue, without the API (PostgreSQL from DATABASE_URL only)')
    .option(
      '--concurrency <n>',
      'most runs executed at once (default MT_WORKER_CONCURRENCY, else 8; fewer work at once while the loop is busy)',
      parseConcurrency,
    )
    .addHelpText(
      'after',
      `
Any number of workers and servers can share one database; a run a killed worker held is taken over by
another within about 15 s. SIGTERM turns readiness false, waits for the tool calls in flight, then hands
their runs back (replayed with the same Idempotency-Keys) and exits within MT_SHUTDOWN_GRACE_MS.

Environment:
  DATABASE_URL           PostgreSQL connection string (required)
  MT_SECRET_KEY          the server's secret key (required: tool calls unseal secrets with it)
  MT_WORKER_CONCURRENCY  most runs executed at once (default 8)
  MT_EGRESS_ALLOW        as for mt serve: what tools may call beyond the public internet
  MT_PUBLIC_URL          as for mt serve: the only target of auth = "Maitento" connectors
                         (a worker has no address of its own: set it for platform tools)
  MT_LOG_LEVEL           log level (default info); logs go to stderr as JSON lines, as mt serve's
  MT_METRICS_PORT        serve Prometheus metrics at GET /metrics on this port (MT_METRICS_HOST, default 127.0.0.1)
  MT_RETENTION_DAYS      days ended runs are kept before the hourly retention job deletes them (default 30; 0: forever)
  MT_WORKER_HEALTH_PORT  answer GET /health (readiness) and GET /health/live on this port (MT_WORKER_HEALTH_HOST,
                         default 127.0.0.1); unset: none
  MT_WORKER_STUCK_MS     unready while every slot waits on a call older than this (default 60000)
  MT_SHUTDOWN_GRACE_MS   on SIGTERM, exit within this (default 30000; the orchestrator's grace must exceed it)
  OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL   the model providers`,
    )
    .action(async (flags: { concurrency?: number }) => {
      const databaseUrl = process.env.DATABASE_URL;
      let running: Awaited<ReturnType<typeof startWorker>>;
      try {
        if (!databaseUrl) throw cliErrors.create('api:cli:worker-needs-database');
        const server = await import('@maitento/server');
        running = await server.startWorker({
          databaseUrl,
          concurrency: flags.concurrency,
          // One JSON line per entry on stderr, as `mt serve`'s log and of its shape (level, time, pid, hostname, msg).
          logger: server.processLogger((line) => io.err(line)),
        });
      } catch (error) {
        throw new CommandExit(reportError(io, error));
      }
      await runUntilSignal(io, running, [
        `worker ${running.engine.workerId} executing runs (data: PostgreSQL (DATABASE_URL))`,
      ]);
    });
};
