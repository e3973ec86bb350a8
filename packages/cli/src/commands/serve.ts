import type { startServer } from '@maitento/server';
import { ExitCode } from '../internal/exit-codes.js';
import { CommandExit, reportError } from '../internal/output.js';
import { runUntilSignal } from '../internal/until-signal.js';
import type { RegisterCommand } from './index.js';

interface ServeFlags {
  port: string;
  host: string;
  data?: string;
  worker: boolean;
}

/** `mt serve`: runs the API server until SIGINT or SIGTERM. */
export const register: RegisterCommand = (program, io) => {
  program
    .command('serve')
    .description('Run the Maitento API server (PostgreSQL from DATABASE_URL, else embedded PGlite)')
    .option('--port <port>', 'port to listen on; 0 picks a free one', '8080')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--data <dir>', 'PGlite data folder when DATABASE_URL is not set (default .maitento/data)')
    .option('--no-worker', 'serve the API only: execute no run here (runs wait for `mt worker` processes)')
    .addHelpText(
      'after',
      `
Environment:
  DATABASE_URL      PostgreSQL connection string; without it an embedded PGlite database is used
  MT_SECRET_KEY     32 bytes (base64 or hex) secrets are encrypted under; required with DATABASE_URL
  MT_BOOTSTRAP_KEY  the first admin key on an empty database (otherwise one is generated and printed)
  MT_EGRESS_ALLOW   comma-separated CIDRs and host names tools may call although they are not public
  MT_PUBLIC_URL     the server's public URL, the only target of auth = "Maitento" connectors
                    (unset: the address it listens on, when --port is not 0)
  MT_LOG_LEVEL      log level (default info); logs go to stderr, written synchronously (nothing is lost on exit)
  MT_LOG_SLOW_MS    at info, only failed (5xx) requests and those slower than this are logged (default 1000);
                    at debug, every request
  MT_METRICS_PORT   serve Prometheus metrics at GET /metrics on this port (MT_METRICS_HOST, default 127.0.0.1)
  MT_RETENTION_DAYS days ended runs are kept before the hourly retention job deletes them (default 30; 0: forever)
  MT_SHUTDOWN_GRACE_MS    on SIGTERM, exit within this (default 30000; the orchestrator's grace must exceed it)
  MT_SHUTDOWN_UNREADY_MS  on SIGTERM, answer this long (readiness 503) before closing the listener (default 5000)`,
    )
    .action(async (flags: ServeFlags) => {
      const port = Number(flags.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        io.err(`error: --port must be a port number, not ${flags.port}`);
        throw new CommandExit(ExitCode.Usage);
      }
      let running: Awaited<ReturnType<typeof startServer>>;
      try {
        const server = await import('@maitento/server');
        running = await server.startServer({
          port,
          host: flags.host,
          dataDir: flags.data,
          // The level is the server's MT_LOG_LEVEL (read in its settings module).
          logger: { stream: process.stderr },
          message: (line) => io.err(line),
          // --no-worker: an API-only server (a restore drill, a fleet whose runs `mt worker` executes).
          ...(flags.worker ? {} : { worker: false as const }),
        });
      } catch (error) {
        throw new CommandExit(reportError(io, error));
      }
      // The server read DATABASE_URL; its database says which it chose.
      const store =
        running.db.driver === 'pg' ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${flags.data ?? '.maitento/data'}`;
      await runUntilSignal(io, running, [
        `listening on ${running.url} (data: ${store})`,
        `web console: ${running.url}/console (approvals at ${running.url}/console/approvals)`,
      ]);
    });
};
